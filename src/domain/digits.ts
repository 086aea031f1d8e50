/**
 * Persian (`۰-۹`) and Arabic-Indic (`٠-٩`) digits as their ASCII twins, the
 * rest of the text untouched. People in Iran write dates and times in either
 * (`۱۴۰۵/۰۸/۱۹`), and a keyboard may give one or the other; JavaScript's `\d`
 * matches neither, so text is folded before it is matched.
 */
export function asciiDigits(text: string): string {
  return text.replace(/[\u06f0-\u06f9\u0660-\u0669]/g, (char) => {
    const code = char.charCodeAt(0);
    return String(code >= 0x6f0 ? code - 0x6f0 : code - 0x660);
  });
}

/**
 * `url` read as an `http://` or `https://` address, or why it is not one:
 * where prices are fetched from (a source) and where alerts are sent (a
 * webhook) both start from this, then add rules of their own.
 */
export function parseHttpUrl(url: string): URL | string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'not a valid URL';
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return `only https:// addresses are allowed (got ${parsed.protocol}//)`;
  return parsed;
}

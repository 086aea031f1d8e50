/**
 * Keys out of everything written down: log lines, the usage error log.
 *
 * The stream takes its key from `?api_key=` as Fastify's query parser reads
 * it: the name and the value are percent-decoded (`api%5Fkey`, `%61pi_key`,
 * `nrk%5F…` all work), `+` is a space, the value is trimmed, and the query
 * starts at the first `?` or `#`. Redaction reads an address the same way and
 * goes further: it replaces the value of any parameter whose name, decoded
 * and stripped of punctuation and case, says "apikey" (`API_KEY`, `api-key`,
 * `x-api-key`: a client may send these though the server never reads them)
 * or is `key` (BrsApi's compatibility route reads it),
 * and any path segment, parameter name or value that, decoded, holds a key's
 * prefix. Since every key starts with `nrk_`, no key survives in any
 * spelling, wherever in the address it was put.
 */

export const REDACTED = '[redacted]';

/**
 * Cheap test first: text with none of these holds neither a key nor a key-named parameter
 * (`api_key`, `key`). "api" alone would not do: every log line names its host, and hosts are often called `api-1`.
 */
const SUSPECT = /%|nrk|key/i;
const KEY_PREFIX = /nrk_/i;
const PERCENT = /%([0-9A-Fa-f]{2})/g;
const PATH_SEGMENT = /[^/]+/g;
/** `&` separates parameters for the server; `;` and a later `?` or `#` are split too, which only ever redacts more. */
const PARAMETER = /[^&;?#]+/g;

/** The address as it may be logged or stored: the same shape, with every key (and every key-named parameter's value) replaced. */
export function redactKeysInUrl(url: string): string {
  if (!SUSPECT.test(url)) return url;
  const q = queryStart(url);
  const path = q === -1 ? url : url.slice(0, q);
  const redactedPath = path.replace(PATH_SEGMENT, (segment) => (holdsKey(segment) ? REDACTED : segment));
  if (q === -1) return redactedPath;
  return redactedPath + url.slice(q, q + 1) + url.slice(q + 1).replace(PARAMETER, redactParameter);
}

/** A key-shaped token anywhere in a text (a log line as a whole): the last guard, for text no field-level redaction saw. */
const TOKEN = /[A-Za-z0-9%_+.~-]{4,}/g;
/** `name=value` after a delimiter, as an address inside a log message would hold it. */
const NAMED_VALUE = /([?&#;])([^=&#;?\s"'<>\\]*)=([^&#;\s"'<>\\]*)/g;

/** Any text with keys (and the values of key-named parameters) replaced; text with neither comes back as it was. */
export function redactKeysInText(text: string): string {
  if (!SUSPECT.test(text)) return text;
  return text
    .replace(NAMED_VALUE, (whole, mark: string, name: string) => (namesKey(name) ? `${mark}${name}=${REDACTED}` : whole))
    .replace(TOKEN, (token, at: number, whole: string) => (holdsKey(token) ? escapeLeading(token, at, whole) + REDACTED : token));
}

/**
 * The part of `token` that belongs to a JSON escape before it (`\n`, `\u0041`):
 * kept, so that a redacted log line is still valid JSON.
 */
function escapeLeading(token: string, at: number, text: string): string {
  let backslashes = 0;
  while (at - backslashes > 0 && text.charCodeAt(at - backslashes - 1) === 0x5c) backslashes++;
  if (backslashes % 2 === 0) return '';
  return /^u[0-9A-Fa-f]{4}/.test(token) ? token.slice(0, 5) : token.slice(0, 1);
}

/** Where the query begins, as the router splits it: at the first `?` or `#`. */
function queryStart(url: string): number {
  const question = url.indexOf('?');
  const hash = url.indexOf('#');
  if (question === -1) return hash;
  return hash === -1 || question < hash ? question : hash;
}

function redactParameter(parameter: string): string {
  const equals = parameter.indexOf('=');
  const name = equals === -1 ? parameter : parameter.slice(0, equals);
  if (holdsKey(name)) return REDACTED;
  if (equals === -1) return parameter;
  if (namesKey(name) || holdsKey(parameter.slice(equals + 1))) return `${name}=${REDACTED}`;
  return parameter;
}

/** Whether a raw piece of an address, decoded as the server would (and then some), holds a key's prefix. */
function holdsKey(raw: string): boolean {
  return KEY_PREFIX.test(decodeLoosely(raw));
}

/** A parameter name that says "API key" in any case, spelling or encoding, or is `key` itself (BrsApi's compatibility route takes it there). */
function namesKey(raw: string): boolean {
  const name = decodeLoosely(raw)
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '');
  return name === 'key' || name.includes('apikey');
}

/**
 * `+` as a space and every valid `%XX` decoded, up to three times over (a
 * doubly encoded key is still a key to whoever reads the log); malformed
 * escapes stay as they are rather than hide what follows them.
 */
export function decodeLoosely(raw: string): string {
  let out = raw.includes('+') ? raw.replace(/\+/g, ' ') : raw;
  for (let i = 0; i < 3 && out.includes('%'); i++) {
    const decoded = out.replace(PERCENT, (_match, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    if (decoded === out) break;
    out = decoded;
  }
  return out;
}

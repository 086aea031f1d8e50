/**
 * The URL Fastify routes on. A path with malformed percent-encoding would fail
 * in the router, before any hook runs: its answer would skip the order of
 * checks (the key comes first) and go unmetered. Escaping each `%` of such a
 * path lets it route like any other; the route reads the URL as received
 * (`originalUrl`) and refuses it after admission.
 */
export function routableUrl(url: string): string {
  if (url.startsWith('/compat/')) url = compatSpelling(url);
  const percent = url.indexOf('%');
  if (percent === -1) return url;
  let end = url.indexOf('?');
  if (end === -1) end = url.length;
  if (percent > end) return url;
  const path = url.slice(0, end);
  try {
    decodeURIComponent(path);
    return url;
  } catch {
    return path.replaceAll('%', '%25') + url.slice(end);
  }
}

/**
 * The compatibility routes answer their peer's other spellings too: navasan's
 * paths without the trailing slash, BrsApi's without `Api/`. Each is routed
 * as the route's own path (only the path is changed; the log and the usage
 * error log keep the address as received).
 */
const COMPAT_SPELLINGS = new Map([
  ['/compat/navasan/latest', '/compat/navasan/latest/'],
  ['/compat/navasan/ohlcSearch', '/compat/navasan/ohlcSearch/'],
  ['/compat/navasan/usage', '/compat/navasan/usage/'],
  ['/compat/brsapi/Market/Gold_Currency.php', '/compat/brsapi/Api/Market/Gold_Currency.php'],
]);

function compatSpelling(url: string): string {
  const question = url.indexOf('?');
  const path = question === -1 ? url : url.slice(0, question);
  const canonical = COMPAT_SPELLINGS.get(path.includes('%') ? decodedOrSame(path) : path);
  return canonical === undefined ? url : canonical + (question === -1 ? '' : url.slice(question));
}

function decodedOrSame(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

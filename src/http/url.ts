/**
 * The URL Fastify routes on. A path with malformed percent-encoding would fail
 * in the router, before any hook runs: its answer would skip the order of
 * checks (the key comes first) and go unmetered. Escaping each `%` of such a
 * path lets it route like any other; the route reads the URL as received
 * (`originalUrl`) and refuses it after admission.
 */
export function routableUrl(url: string, spellings: ReadonlyMap<string, string> = NO_SPELLINGS): string {
  if (spellings.size > 0) url = routedSpelling(url, spellings);
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


const NO_SPELLINGS: ReadonlyMap<string, string> = new Map();

/**
 * Other spellings of a route's path (a peer's own: navasan's trailing slash,
 * BrsApi's path without `Api/`, see the descriptors' `spellings`) are routed
 * as the route's path; only the path changes, and the log and the usage
 * error log keep the address as received.
 */
function routedSpelling(url: string, spellings: ReadonlyMap<string, string>): string {
  const question = url.indexOf('?');
  const path = question === -1 ? url : url.slice(0, question);
  const route = spellings.get(path.includes('%') ? decodedOrSame(path) : path);
  return route === undefined ? url : route + (question === -1 ? '' : url.slice(question));
}

function decodedOrSame(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

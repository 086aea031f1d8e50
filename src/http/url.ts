/**
 * The URL Fastify routes on. A path with malformed percent-encoding would fail
 * in the router, before any hook runs: its answer would skip the order of
 * checks (the key comes first) and go unmetered. Escaping each `%` of such a
 * path lets it route like any other; the route reads the URL as received
 * (`originalUrl`) and refuses it after admission.
 */
export function routableUrl(url: string): string {
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

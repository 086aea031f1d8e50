import { BlockList, isIP } from 'node:net';
import { parseHttpUrl } from '../domain/http-url.js';

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** `localhost`, 127.0.0.0/8 or ::1 (IPv4-mapped too): an address that never leaves this host. */
function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
  if (host === 'localhost') return true;
  const family = isIP(host);
  return family !== 0 && LOOPBACK.check(host, family === 6 ? 'ipv6' : 'ipv4');
}

/**
 * Why an http source may not be fetched from `url`, or null when it may:
 * only `https://`, except plain `http://` to a loopback host or when the
 * source sets `allow_insecure` (a plain request can be read and altered on
 * the way, and so can the prices it brings). Checked when the config is
 * loaded and again before every request, redirects included.
 */
export function addressRefusal(url: string, allowInsecure: boolean): string | null {
  const parsed = parseHttpUrl(url);
  if (typeof parsed === 'string') return parsed;
  if (parsed.protocol === 'https:') return null;
  if (allowInsecure || isLoopbackHost(parsed.hostname)) return null;
  return 'plain http:// is allowed only to a loopback host (use https:// or set "allow_insecure": true)';
}

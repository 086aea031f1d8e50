import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { parseHttpUrl } from '../domain/http-url.js';

/**
 * Where a webhook may be sent (the SSRF rule): `https://` to a public
 * address; a private, loopback, link-local or otherwise reserved address (and
 * then `http://` too) only with `"webhooks": {"allow_private": true}`. Checked
 * when an endpoint is added, with the name resolved then, and again at every
 * delivery on the addresses the connection actually uses (a name may resolve
 * elsewhere later). ipaddr.js classifies the addresses: anything but its
 * `unicast` range is private here.
 */

/** Why the URL itself may not be used (before any name is resolved), or null. */
export function webhookUrlRefusal(url: string, allowPrivate: boolean): string | null {
  const parsed = parseHttpUrl(url);
  if (typeof parsed === 'string') return parsed;
  if (parsed.username || parsed.password) return 'a user name or password in the URL is not allowed';
  if (parsed.hash) return 'a #fragment is not allowed';
  if (parsed.protocol === 'http:' && !allowPrivate) return 'only https:// addresses are allowed (http:// only to a private or loopback address, with "webhooks": {"allow_private": true})';
  const host = hostOf(parsed);
  if (isIP(host) === 0) return null;
  const refused = addressRefusal(host, parsed.protocol, allowPrivate);
  return refused && `${host} is ${refused}`;
}

/** Why a resolved (or literal) address may not be sent to over `protocol` (`https:`/`http:`), or null. */
export function addressRefusal(address: string, protocol: string, allowPrivate: boolean): string | null {
  if (isPrivate(address)) return allowPrivate ? null : 'a private or loopback address (allowed only with "webhooks": {"allow_private": true})';
  if (protocol === 'http:') return 'a public address, and plain http:// is allowed only to a private or loopback one (use https://)';
  return null;
}

/** True for every address outside public unicast: loopback, private, link-local, unique-local, multicast, reserved, unspecified. */
export function isPrivate(address: string): boolean {
  try {
    return ipaddr.process(address).range() !== 'unicast';
  } catch {
    return true;
  }
}

/** The URL's host without IPv6 brackets. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

/**
 * The URL checked whole: its form, then every address its name resolves to
 * now. Resolves to null when it may be used, else to why not.
 */
export async function checkWebhookUrl(url: string, allowPrivate: boolean): Promise<string | null> {
  const refusal = webhookUrlRefusal(url, allowPrivate);
  if (refusal) return refusal;
  const parsed = new URL(url);
  const host = hostOf(parsed);
  if (isIP(host) !== 0) return null;
  let addresses: LookupAddress[];
  try {
    addresses = await new Promise<LookupAddress[]>((resolve, reject) => dnsLookup(host, { all: true }, (error, found) => (error ? reject(error) : resolve(found))));
  } catch (error) {
    return `cannot resolve ${host} (${(error as NodeJS.ErrnoException).code ?? 'lookup failed'})`;
  }
  for (const { address } of addresses) {
    const refused = addressRefusal(address, parsed.protocol, allowPrivate);
    if (refused) return `${host} resolves to ${address}, ${refused}`;
  }
  return null;
}

/** A name lookup for one delivery's connection: the addresses it may use, or an error naming the one refused. */
export function guardedLookup(protocol: string, allowPrivate: boolean) {
  return (hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void): void => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error);
      for (const { address } of addresses) {
        const refused = addressRefusal(address, protocol, allowPrivate);
        if (refused) return callback(Object.assign(new Error(`${hostname} resolves to ${address}, ${refused}`), { code: 'EADDRREFUSED' }));
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0]!;
      callback(null, first.address, first.family);
    });
  };
}

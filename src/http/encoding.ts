import Negotiator from 'negotiator';
import type { Encoding } from '../render/compression.js';

/** Ours first: on a tie gzip wins, being about half brotli's cost per compression for a similar size at the levels we use. */
const OFFERED = ['gzip', 'br', 'identity'];
const PREFERRED = { preferred: ['gzip', 'br'] };
/** Clients send few distinct Accept-Encoding values; past this many, the cache starts over. */
const MAX_REMEMBERED = 256;
/** Real Accept-Encoding values are a few dozen characters; a longer one is negotiated each time, never kept (so at most 256 × 256 characters are). */
const MAX_REMEMBERED_LENGTH = 256;
const remembered = new Map<string, Encoding | null>();
/** negotiator 1.x takes the server's preference for ties; its published types predate that option. */
type ChooseEncoding = (available: string[], options: { preferred: string[] }) => string | undefined;

/** The content coding to answer with for an Accept-Encoding header (q-values honoured); null: none. */
export function acceptedEncoding(header: string | undefined): Encoding | null {
  if (header === undefined || header === '') return null;
  let chosen = remembered.get(header);
  if (chosen === undefined) {
    const negotiator = new Negotiator({ headers: { 'accept-encoding': header } });
    const best = (negotiator.encoding as ChooseEncoding).call(negotiator, OFFERED, PREFERRED);
    chosen = best === 'gzip' || best === 'br' ? best : null;
    if (header.length <= MAX_REMEMBERED_LENGTH) {
      if (remembered.size >= MAX_REMEMBERED) remembered.clear();
      remembered.set(header, chosen);
    }
  }
  return chosen;
}

/** The ETag of a compressed form: weak, as the bytes differ from the identity form's while the content is the same. */
export function encodedEtag(etag: string): string {
  return `W/${etag}`;
}

import type { FixedBody } from '../render/fixed-body.js';

/** An answer in a peer's shape, prepared per snapshot: its bytes, ETag, and the x-nerkh-* headers naming what it left out. */
export interface PeerAnswer {
  body: FixedBody;
  etag: string;
  headers: readonly string[];
}

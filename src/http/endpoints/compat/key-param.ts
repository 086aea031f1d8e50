import type { ParamSpec } from '../../pipeline/params.js';

/** The key in the peer's own query parameter (navasan `api_key`, BrsApi `key`); the x-api-key header works too. Never logged. */
export function peerKeyParam(peer: string): ParamSpec {
  return { type: 'string', maxLength: 200, description: `Your Nerkh key, in ${peer}'s own parameter (the x-api-key header works too); never logged` };
}

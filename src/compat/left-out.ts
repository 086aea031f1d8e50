/**
 * The items an answer in a peer's shape leaves out, or serves stale, named in
 * headers (the peer's body has no room for them): a flat name, value list for
 * the pipeline, with only the lists that hold something.
 */
export interface LeftOut {
  /** Names no mapping has. */
  unknown: string[];
  /** Mapped, but outside the plan's references. */
  denied: string[];
  /** Mapped and allowed, with no value to show. */
  unavailable: string[];
  /** Served, but stale. */
  stale: string[];
}

export const LEFT_OUT_HEADERS = {
  unknown: 'x-nerkh-unknown-items',
  denied: 'x-nerkh-denied-items',
  unavailable: 'x-nerkh-unavailable-items',
  stale: 'x-nerkh-stale-items',
} as const satisfies Record<keyof LeftOut, string>;

export function noneLeftOut(): LeftOut {
  return { unknown: [], denied: [], unavailable: [], stale: [] };
}

export function leftOutHeaders(left: LeftOut): string[] {
  const headers: string[] = [];
  for (const list of ['unknown', 'denied', 'unavailable', 'stale'] as const) {
    if (left[list].length > 0) headers.push(LEFT_OUT_HEADERS[list], left[list].join(','));
  }
  return headers;
}

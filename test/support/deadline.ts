/**
 * The least time any wait in a test allows. A deadline is there to catch a
 * hang, never to judge speed (speed is measured in `npm run bench`), so a
 * machine busy with the rest of the suite can never fail a test by being slow.
 * A wait returns as soon as what it waits for happens: a passing test never
 * waits this out.
 */
export const HANG_MS = 30_000;

/** `ms`, or HANG_MS when that is longer. */
export function generous(ms: number): number {
  return Math.max(ms, HANG_MS);
}

/**
 * The head every success body starts with, up to its time's value, written
 * here once: bodies prepared ahead of time (StampedBody) add the time each
 * second; bodies built per request call `okHead`.
 */
export const OK_HEAD = '{"success":true,"status":"ok","generated_at":"';

/** The head with its time, up to the property that follows (`,"…"` or `}`). */
export function okHead(generatedAt: string): string {
  return `${OK_HEAD}${generatedAt}"`;
}

import type { AccountAccess } from '../../access/directory.js';
import type { Snapshot } from '../../live/snapshot.js';
import { secondsToBoundary } from '../conditional.js';
import type { AppDeps } from '../deps.js';
import type { RenderedAnswer } from '../pipeline/endpoint.js';
import type { Exchange } from '../pipeline/exchange.js';

/**
 * A rendered answer worked out from the snapshot the caller's plan shows now
 * (its refresh tier), which the caller may keep until that tier's next
 * refresh: the shape of /v1/convert and /v1/jewellery.
 */
export function fromPlanSnapshot<P>(
  deps: Pick<AppDeps, 'snapshots' | 'time'>,
  build: (snapshot: Snapshot, account: AccountAccess, params: P, generatedAt: string) => Omit<RenderedAnswer, 'maxAgeSeconds'>,
): (exchange: Exchange, account: AccountAccess, params: P) => RenderedAnswer {
  return (exchange, account, params) => {
    const now = exchange.now;
    const interval = account.plan.refresh_interval_seconds;
    const rendered = build(deps.snapshots.forInterval(interval, now), account, params, deps.time.format(now));
    return { ...rendered, maxAgeSeconds: secondsToBoundary(interval, now) };
  };
}

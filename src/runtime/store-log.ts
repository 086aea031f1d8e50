import type { Clock } from '../domain/clock.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/store.js';

/** The same reason for an unreachable store is logged at most this often. */
const SAME_REASON_MS = 60_000;

/**
 * Every part that uses the store reports to its health; changes are logged,
 * but a store that flaps (a lock held elsewhere lets reads through and fails
 * writes) is reported once a minute per reason, not once a second.
 */
export function logStoreChanges(store: Store, logger: Logger, clock: Clock): void {
  const lastLogged = new Map<string, number>();
  let down = false;
  store.health.onChange((state) => {
    if (state.reachable) {
      if (down) logger.info({ part: 'store' }, 'store reachable again; buffered usage is being written');
      down = false;
      return;
    }
    const reason = state.error ?? 'unknown';
    const now = clock.now();
    if (!down && now - (lastLogged.get(reason) ?? -Infinity) >= SAME_REASON_MS) {
      logger.error({ part: 'store', reason }, 'store unreachable; serving from memory and buffering usage');
      lastLogged.set(reason, now);
      down = true;
    }
  });
}

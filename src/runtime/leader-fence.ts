import { epochOf, type LeaderLease } from '../bus/lease.js';
import type { RecorderFence } from '../history/record/recorder.js';
import type { Logger } from '../log.js';

/**
 * How this leadership's history writes are fenced: by its lease epoch, so a
 * leader that paused past its lease cannot overwrite its successor's candles
 * (none for a single process, whose token has no epoch). A refused write hands
 * the lease back, to be taken again with an epoch above the store's.
 */
export function leaderFence(lease: LeaderLease | null, logger: Logger): RecorderFence | null {
  const epoch = lease ? epochOf(lease.token) : null;
  if (lease === null || epoch === null) return null;
  return {
    epoch,
    onRefused: (fence) => {
      logger.warn({ part: 'history', epoch, fence }, 'history write refused: a leader with a newer epoch has written; this leadership stops recording');
      void lease.respectFence(fence);
    },
  };
}

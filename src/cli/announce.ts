import type { AppConfig } from '../config.js';
import { RedisLink } from '../bus/link.js';
import type { NoticeKind } from '../bus/notices.js';
import { RedisNotices } from '../bus/redis-notices.js';
import { createLogger } from '../log.js';

/** How long an admin command waits for Redis before leaving the change to the servers' store poll. */
const CONNECT_WAIT_MS = 1000;

/**
 * Tell every server of a change the command made, so each reloads its keys at
 * once (docs/operations.md#accounts-and-keys) rather than at its next store poll. Only
 * with `NERKH_REDIS_URL`; without it there is one server, which polls every
 * 500 ms. A notice that cannot be sent is one line on stderr, never a failure:
 * the change is made, and the poll picks it up.
 */
export async function announce(config: AppConfig, kinds: ReadonlySet<NoticeKind>): Promise<void> {
  if (!config.redisUrl || kinds.size === 0) return;
  const logger = createLogger('silent');
  const link = new RedisLink({ url: config.redisUrl, prefix: config.redisPrefix, logger });
  try {
    if (!(await link.whenReady(CONNECT_WAIT_MS))) {
      console.error('nerkh: Redis unreachable; servers apply this change at their next store poll (within a second)');
      return;
    }
    const notices = new RedisNotices(link, logger);
    for (const kind of kinds) await notices.notify(kind);
  } finally {
    await link.close();
  }
}

import type { Logger } from '../log.js';
import type { Store } from '../store/store.js';

/**
 * Only without a config file, on a store with no account at all: a `demo`
 * account on `pro`, whose key is returned once. Nodes starting together on one database may race for it:
 * the one whose insert loses shows no key.
 */
export async function ensureDemoAccount(store: Store, logger: Logger): Promise<string | null> {
  if ((await store.accounts.count()) > 0) return null;
  try {
    const account = await store.accounts.create('demo', 'pro');
    const issued = await store.keys.issue(account.id, { label: 'demo' });
    return issued.key;
  } catch (error) {
    if (!(await store.accounts.find('demo').catch(() => null))) throw error;
    logger.info({ part: 'demo' }, 'the demo account was created by another node');
    return null;
  }
}

import type { Store } from '../../src/store/store.js';
import type { UsageCount, UsageErrorEntry } from '../../src/store/usage-repository.js';

const SERVICES = ['catalogue', 'detail', 'history', 'stream', 'status', 'usage', 'webservice'];

/**
 * Everything a usage report can hold, written into the store for `accountId`:
 * 90 days of counts over ten more keys and every service, and a full error log
 * (1,000 entries with long paths). What makes a 90-day report as costly as it gets.
 */
export async function seedUsageHistory(store: Store, accountId: string, now = Date.now()): Promise<void> {
  const counts: UsageCount[] = [];
  for (let k = 0; k < 10; k++) {
    const keyId = (await store.keys.issue(accountId, { label: `history ${k}` })).id;
    for (let d = 0; d < 90; d++) {
      const day = new Date(now - d * 86_400_000).toISOString().slice(0, 10);
      for (const service of SERVICES) counts.push({ account_id: accountId, key_id: keyId, day, service, ok: 100 + d, errors: d % 7 });
    }
  }
  const errors: UsageErrorEntry[] = Array.from({ length: 1000 }, (_, i) => ({
    account_id: accountId,
    key_id: 'seeded',
    at: now - 3_600_000 - i * 60_000,
    service: SERVICES[i % SERVICES.length]!,
    path: `/v1/rates/${'usd_free,'.repeat(12)}no_such_${i}`,
    http_status: 404,
    error: 'RATE_NOT_FOUND',
    count: 1 + (i % 5),
  }));
  await store.usage.record(counts, errors);
}

import type { Rate, RateStatus } from '../domain/rate.js';
import { prepareRate, type RateTime } from './prepare.js';
import type { PreparedRate, Snapshot } from './snapshot.js';
import { ageOf } from '../domain/resolve.js';
import type { Markets } from './markets.js';

/**
 * A snapshot as it stands at `now` from what it holds alone: a fresh value
 * that has outlived its source's max age turns stale, and every stale value's
 * `stale_seconds` moves on. A serving node uses this while no ingest leader's
 * snapshots reach it (Redis away, or a leader gone and not yet replaced), so
 * what it serves never claims a freshness it no longer has. Without the
 * sources it cannot fail over; the leader does that once it is back.
 *
 * Ages count only the open time of each rate's market, and each rate's
 * market state moves on with this node's own calendar.
 *
 * Returns `snapshot` itself when nothing changes. `maxAgeMs` is per source name.
 */
export function ageSnapshot(snapshot: Snapshot, now: number, maxAgeMs: ReadonlyMap<string, number>, time: RateTime, markets: Markets | null = null): Snapshot {
  let rates: Map<string, PreparedRate> | null = null;
  const counts = { ok: 0, stale: 0, unavailable: 0 };
  const fields = markets?.fields(now) ?? null;
  for (const [key, prepared] of snapshot.rates) {
    let aged = ageRate(prepared.rate, now, maxAgeMs, markets);
    const market = fields && prepared.rate.market ? fields.byName.get(prepared.rate.market.name) : undefined;
    if (market && market !== aged.market) aged = { ...aged, market };
    // A snapshot holds only live rates ('historical' is for answers read from history).
    counts[aged.status as RateStatus]++;
    if (aged === prepared.rate) {
      rates?.set(key, prepared);
      continue;
    }
    const next = prepareRate(aged, time, prepared);
    if (next === prepared) {
      rates?.set(key, prepared);
      continue;
    }
    if (!rates) {
      // Copy what came before, unchanged, the first time a rate changes.
      rates = new Map();
      for (const [earlier, same] of snapshot.rates) {
        if (earlier === key) break;
        rates.set(earlier, same);
      }
    }
    rates.set(key, next);
  }
  if (!rates) return snapshot;
  return { version: snapshot.version, builtAt: now, rates, lastUpdate: snapshot.lastUpdate, counts };
}

function ageRate(rate: Rate, now: number, maxAgeMs: ReadonlyMap<string, number>, markets: Markets | null): Rate {
  if (rate.updated_at === null || rate.status === 'unavailable') return rate;
  const age = ageOf(rate.updated_at, now, markets?.calendarOf(rate.key));
  const staleSeconds = Math.max(0, Math.floor(age / 1000));
  if (rate.status === 'ok') {
    const maxAge = rate.source === null ? undefined : maxAgeMs.get(rate.source);
    // Fresh while younger than its source's max age (of open time), exactly as the resolver decides it.
    if (maxAge === undefined || age <= maxAge) return rate;
    return { ...rate, status: 'stale', stale_seconds: staleSeconds };
  }
  return rate.stale_seconds === staleSeconds ? rate : { ...rate, stale_seconds: staleSeconds };
}

/** Whether two snapshots serve the same rates (the bus keeps each unchanged rate's prepared object). */
export function sameRates(a: Snapshot, b: Snapshot): boolean {
  if (a.rates.size !== b.rates.size) return false;
  for (const [key, prepared] of a.rates) if (b.rates.get(key) !== prepared) return false;
  return true;
}

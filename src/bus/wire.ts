import type { MarketField, Rate } from '../domain/rate.js';
import type { KnownValue } from '../domain/resolve.js';
import { prepareRate, type RateTime } from '../live/prepare.js';
import type { PreparedRate } from '../live/snapshot.js';
import type { SourceHealth } from '../sources/monitor.js';
import { NO_DROPS } from '../sources/drops.js';
import { NO_UNKNOWN_KEYS } from '../sources/unknown-keys.js';
import type { SharedSnapshot } from './snapshot-bus.js';
import { checkSnapshotMessage, WireError } from './wire-check.js';

export { WireError } from './wire-check.js';

/** Bumped when the wire form changes incompatibly; a node ignores a format it does not know. */
export const WIRE_FORMAT = 1;

/**
 * A snapshot on the wire, as JSON:
 *
 * ```
 * {"version":42,"format":1,"leader":"node-a","built_at":<ms>,"last_update":<ms|null>,
 *  "counts":{"ok":…,"stale":…,"unavailable":…},
 *  "rates":[Rate…],                       // catalogue order; `value` is the source's number TEXT
 *  "health":[SourceHealth…],              // the leader's view of its sources
 *  "last_known":[[key, raw, updated_at_ms, source]…]}
 * ```
 *
 * Values travel as JSON strings (`"value":"123456789012345678"`), never as
 * numbers, so no digit is ever lost to a float. `version` is not part of what
 * the leader encodes: the publish script assigns it and writes it first.
 */
interface WireSnapshot {
  version: number;
  format: number;
  leader: string;
  built_at: number;
  last_update: number | null;
  counts: { ok: number; stale: number; unavailable: number };
  rates: Rate[];
  health: readonly SourceHealth[];
  last_known: [string, string, number, string][];
}

/** The JSON of a shared snapshot without its version; it starts with `{` so a version can be put in front. */
export function encodeSnapshot(shared: SharedSnapshot): string {
  const { snapshot } = shared;
  const rates: Rate[] = [];
  for (const prepared of snapshot.rates.values()) rates.push(prepared.rate);
  const lastKnown: WireSnapshot['last_known'] = [];
  for (const [key, known] of shared.lastKnown) lastKnown.push([key, known.value.raw, known.value.updatedAt, known.source]);
  return JSON.stringify({
    format: WIRE_FORMAT,
    leader: shared.leader,
    built_at: snapshot.builtAt,
    last_update: snapshot.lastUpdate,
    counts: snapshot.counts,
    rates,
    health: shared.health,
    last_known: lastKnown,
  } satisfies Omit<WireSnapshot, 'version'>);
}

/** The whole message for a version, as the publish script builds it (used where there is no script). */
export function withVersion(version: number, encoded: string): string {
  return `{"version":${version},${encoded.slice(1)}`;
}

/** The version of a message read from its first bytes, so an old or repeated one is skipped unparsed. */
export function versionOf(message: string): number | null {
  const match = /^\{"version":(\d+),/.exec(message);
  return match ? Number(match[1]) : null;
}

/**
 * Rebuild a shared snapshot from its message, after checking every field
 * (wire-check.ts): a message that fails is refused whole with a `WireError`.
 * Rates are prepared exactly as the
 * leader's engine prepared them (the same `prepareRate`), so every node writes
 * the same bytes; a rate that serialises as in `previous` keeps its prepared object.
 */
export function decodeSnapshot(message: string, time: RateTime, previous: SharedSnapshot | null): SharedSnapshot {
  let wire: WireSnapshot;
  try {
    wire = JSON.parse(message) as WireSnapshot;
  } catch {
    throw new WireError('snapshot message is not JSON');
  }
  checkShape(wire);
  const rates = new Map<string, PreparedRate>();
  // One market object per market and state, as on the leader: each one's JSON is then made once.
  const markets = new Map<string, MarketField>();
  for (const rate of wire.rates) {
    if (rate.market === null) delete rate.market;
    else if (rate.market !== undefined) {
      const id = JSON.stringify(rate.market);
      const known = markets.get(id) ?? previousMarket(previous, rate.key, id);
      if (known) rate.market = known;
      else markets.set(id, (rate.market = Object.freeze({ ...rate.market })));
    }
    const before = previous?.snapshot.rates.get(rate.key);
    rates.set(rate.key, before && sameRate(before.rate, rate) ? before : prepareRate(rate, time, before));
  }
  const lastKnown = new Map<string, KnownValue>();
  for (const [key, raw, updatedAt, source] of wire.last_known) lastKnown.set(key, { value: { raw, value: Number(raw), updatedAt }, source });
  return {
    snapshot: { version: wire.version, builtAt: wire.built_at, rates, lastUpdate: wire.last_update, counts: wire.counts },
    // A leader of an earlier release sends no unknown_keys, format, mapped or dropped_reasons.
    health: wire.health.map((health) => ({ ...health, unknown_keys: health.unknown_keys ?? NO_UNKNOWN_KEYS, format: health.format ?? 'nerkh', mapped: health.mapped ?? 0, dropped_reasons: health.dropped_reasons ?? NO_DROPS })),
    lastKnown,
    leader: wire.leader,
  };
}

/** The market object the previous snapshot's rate had, when it is the same market in the same state. */
function previousMarket(previous: SharedSnapshot | null, key: string, id: string): MarketField | undefined {
  const market = previous?.snapshot.rates.get(key)?.rate.market;
  return market && JSON.stringify(market) === id ? market : undefined;
}

/** A rate unchanged field for field serialises to the same bytes: its prepared form is kept without serialising again. */
function sameRate(a: Rate, b: Rate): boolean {
  return (
    a.value === b.value &&
    a.updated_at === b.updated_at &&
    a.status === b.status &&
    a.source === b.source &&
    a.stale_seconds === b.stale_seconds &&
    a.title === b.title &&
    a.unit === b.unit &&
    a.currency === b.currency &&
    a.per === b.per &&
    a.source_key === b.source_key &&
    a.day_open === b.day_open &&
    a.day_high === b.day_high &&
    a.day_low === b.day_low &&
    a.prev_close === b.prev_close &&
    a.change === b.change &&
    a.change_percent === b.change_percent &&
    a.market === b.market
  );
}

/** A format this node does not know is refused as such (an upgrade in progress), before its fields are checked. */
function checkShape(wire: WireSnapshot): void {
  if (typeof wire === 'object' && wire !== null && wire.format !== WIRE_FORMAT) throw new WireError(`snapshot format ${String(wire.format)} is not ${WIRE_FORMAT}`);
  checkSnapshotMessage(wire);
}

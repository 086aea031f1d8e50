import type { Rate, RateTime } from '../domain/rate.js';
import type { Reference } from '../domain/reference.js';
import { inBand, isFresh } from '../domain/resolve.js';
import { RIAL_CURRENCY, rialToToman, TOMAN_CURRENCY, type RateUnit } from '../domain/units.js';
import type { SourceState } from '../sources/monitor.js';
import { isDerivedView, type DerivedInput } from './derived.js';
import type { Snapshot } from './snapshot.js';

/** Why a source's value was not served. */
export type Rejection = 'stale' | 'out_of_range' | 'outlier' | 'unhealthy' | 'held' | 'dropped';

/** One configured source's view of one reference, as the engine saw it when it built the snapshot. */
export interface SourceReport {
  name: string;
  /** The source's number text; null when it holds no value for the reference. */
  value: string | null;
  updatedAt: number | null;
  state: SourceState;
  /** Whether this value is the one served. */
  used: boolean;
  /** Why the value was passed over; null when it was served, or usable but a source earlier in priority was. */
  rejected: Rejection | null;
  /** When `rejected` is `dropped`: why the source's document gave no usable value (a reason code such as `not_a_number`). */
  droppedReason: string | null;
  /** The `derived` source's value: what it was computed from; absent for any other source. */
  inputs?: readonly DerivedInput[];
}

/**
 * Every configured source's view of a reference in the snapshot, in the
 * reference's priority order. The same rules as the resolver, read back from
 * what it was given: a value outside the band, then screening's verdict, then
 * an unhealthy source, then age. Empty for a snapshot built elsewhere.
 */
export function describeSources(reference: Reference, rate: Rate, snapshot: Snapshot): SourceReport[] {
  const at = snapshot.sources;
  if (!at) return [];
  const screened = at.screened.get(reference.key);
  return (at.ordered.get(reference.key) ?? []).map((source) => {
    const state = at.states.get(source.name) ?? 'down';
    const value = source.items.get(reference.source_key);
    if (!value) {
      // The document had the item but it did not read (a price written "N/A", a path that matched nothing): say why.
      const dropped = source.dropped?.get(reference.source_key) ?? null;
      return { name: source.name, value: null, updatedAt: null, state, used: false, rejected: dropped === null ? null : 'dropped', droppedReason: dropped };
    }
    // To the second, as served: an unchanged rate keeps its prepared form (and its first updated_at) when a source rewrites the same value.
    const used = rate.source === source.name && rate.value === value.raw && rate.updated_at !== null && Math.floor(rate.updated_at / 1000) === Math.floor(value.updatedAt / 1000);
    let rejected: Rejection | null = null;
    if (!inBand(reference, value.value)) rejected = 'out_of_range';
    else if (screened?.has(source.name)) rejected = screened.get(source.name)!;
    else if (used) rejected = null;
    else if (!source.healthy) rejected = 'unhealthy';
    else if (!isFresh(value, source.maxAgeMs, snapshot.builtAt, at.age?.(reference.key))) rejected = 'stale';
    const report: SourceReport = { name: source.name, value: value.raw, updatedAt: value.updatedAt, state, used, rejected, droppedReason: null };
    if (isDerivedView(source)) report.inputs = source.inputs.get(reference.source_key) ?? [];
    return report;
  });
}

/**
 * A prepared rate's JSON with its `sources` added, in the rate's own unit:
 * when the rate is shown in toman, so are the sources' values, and the
 * derived source's inputs priced in rial (in `unit`, as the caller asked).
 */
export function withSources(rateJson: string, shown: Rate, reports: readonly SourceReport[], time: RateTime, unit: RateUnit = 'rial'): string {
  const inToman = shown.currency === TOMAN_CURRENCY;
  const entries = reports.map(
    (report) =>
      `{"name":${JSON.stringify(report.name)},"value":${report.value === null ? 'null' : inToman ? rialToToman(report.value) : report.value}` +
      `,"updated_at":${report.updatedAt === null ? 'null' : JSON.stringify(time.format(report.updatedAt))}` +
      `,"state":"${report.state}","used":${report.used},"rejected":${report.rejected === null ? 'null' : `"${report.rejected}"`}` +
      `,"dropped_reason":${report.droppedReason === null ? 'null' : `"${report.droppedReason}"`}` +
      `${report.inputs ? `,"inputs":[${report.inputs.map((input) => inputJson(input, time, unit)).join(',')}]` : ''}}`,
  );
  return `${rateJson.slice(0, -1)},"sources":[${entries.join(',')}]}`;
}

/** One input of a derived value, as served for its own reference (a rial price in toman when toman was asked for). */
function inputJson(input: DerivedInput, time: RateTime, unit: RateUnit): string {
  const toman = unit === 'toman' && input.currency === RIAL_CURRENCY;
  return (
    `{"key":${JSON.stringify(input.key)},"value":${toman ? rialToToman(input.value) : input.value},"currency":"${toman ? TOMAN_CURRENCY : input.currency}"` +
    `,"updated_at":${JSON.stringify(time.format(input.updatedAt))},"status":"${input.status}","source":${JSON.stringify(input.source)}}`
  );
}

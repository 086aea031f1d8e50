import { isDecimalText } from '../domain/decimal.js';
import { CURRENCY_PATTERN, KEY_PATTERN, PER_UNITS } from '../domain/reference.js';
import { DROP_REASONS, DROP_SAMPLE } from '../sources/drops.js';
import { FORMAT_NAMES } from '../sources/formats/spec.js';
import { UNKNOWN_KEY_CHARS, UNKNOWN_KEY_SAMPLE } from '../sources/unknown-keys.js';

/** A message that is not a snapshot this node can serve; nothing of it is used. */
export class WireError extends Error {}

const RATE_STATUSES: ReadonlySet<unknown> = new Set(['ok', 'stale', 'unavailable']);
const SOURCE_STATES: ReadonlySet<unknown> = new Set(['active', 'degraded', 'down']);
const PER: ReadonlySet<unknown> = new Set(PER_UNITS);
/** The day fields and the value: number text the request path pastes into JSON as it is. */
const NUMBER_TEXT_FIELDS = ['value', 'day_open', 'day_high', 'day_low', 'prev_close', 'change', 'change_percent'] as const;
const HEALTH_COUNTS = ['dropped', 'out_of_range', 'outliers', 'held', 'outliers_total'] as const;
const HEALTH_TIMES = ['last_update', 'age_seconds', 'last_check'] as const;
const FORMATS: ReadonlySet<unknown> = new Set(FORMAT_NAMES);
const REASONS: ReadonlySet<unknown> = new Set(DROP_REASONS);

type Fields = Record<string, unknown>;

/**
 * Every field of a snapshot message checked before any of it is used. Rates
 * are served as prepared bytes into which `value`, the day fields and the
 * status are pasted without quoting (the leader's own values need none), so a
 * message from anything else that reached the channel — an old or broken
 * node, a stray writer, anyone holding the Redis password — must not get
 * there: values must be decimal text, statuses known, times numbers, and the
 * strings plain strings. Throws a `WireError` naming the first bad field.
 */
export function checkSnapshotMessage(wire: unknown): void {
  const message = record(wire, 'message');
  need(Number.isSafeInteger(message.version) && (message.version as number) > 0, 'version', message.version);
  need(typeof message.leader === 'string', 'leader', message.leader);
  need(isTime(message.built_at), 'built_at', message.built_at);
  need(message.last_update === null || isTime(message.last_update), 'last_update', message.last_update);
  const counts = record(message.counts, 'counts');
  for (const status of RATE_STATUSES) need(isCount(counts[status as string]), `counts.${String(status)}`, counts[status as string]);
  array(message.rates, 'rates').forEach((rate, i) => checkRate(rate, `rates[${i}]`));
  array(message.health, 'health').forEach((health, i) => checkHealth(health, `health[${i}]`));
  array(message.last_known, 'last_known').forEach((entry, i) => {
    const where = `last_known[${i}]`;
    need(Array.isArray(entry) && entry.length === 4, where, entry);
    const [key, raw, updatedAt, source] = entry as unknown[];
    need(isKey(key), `${where}[0]`, key);
    need(isNumberText(raw), `${where}[1]`, raw);
    need(isTime(updatedAt), `${where}[2]`, updatedAt);
    need(typeof source === 'string', `${where}[3]`, source);
  });
}

function checkRate(value: unknown, where: string): void {
  const rate = record(value, where);
  need(isKey(rate.key), `${where}.key`, rate.key);
  need(isKey(rate.source_key), `${where}.source_key`, rate.source_key);
  need(typeof rate.title === 'string', `${where}.title`, rate.title);
  need(typeof rate.unit === 'string', `${where}.unit`, rate.unit);
  need(typeof rate.currency === 'string' && CURRENCY_PATTERN.test(rate.currency), `${where}.currency`, rate.currency);
  need(PER.has(rate.per), `${where}.per`, rate.per);
  need(RATE_STATUSES.has(rate.status), `${where}.status`, rate.status);
  need(rate.source === null || typeof rate.source === 'string', `${where}.source`, rate.source);
  need(rate.updated_at === null || isTime(rate.updated_at), `${where}.updated_at`, rate.updated_at);
  need(rate.stale_seconds === undefined || isCount(rate.stale_seconds), `${where}.stale_seconds`, rate.stale_seconds);
  for (const field of NUMBER_TEXT_FIELDS) need(rate[field] === null || isNumberText(rate[field]), `${where}.${field}`, rate[field]);
  // Absent from a leader of an earlier release: no market.
  if (rate.market !== undefined && rate.market !== null) {
    const market = record(rate.market, `${where}.market`);
    need(isKey(market.name), `${where}.market.name`, market.name);
    need(market.state === 'open' || market.state === 'closed', `${where}.market.state`, market.state);
    for (const field of ['reason', 'reason_fa'] as const) need(market[field] === null || (typeof market[field] === 'string' && (market[field] as string).length <= 1000), `${where}.market.${field}`, market[field]);
    need(market.opens_at === null || isTime(market.opens_at), `${where}.market.opens_at`, market.opens_at);
    need(Object.keys(market).length === 5, `${where}.market`, market);
  }
}

function checkHealth(value: unknown, where: string): void {
  const health = record(value, where);
  need(typeof health.name === 'string', `${where}.name`, health.name);
  need(SOURCE_STATES.has(health.state), `${where}.state`, health.state);
  need(health.error === null || typeof health.error === 'string', `${where}.error`, health.error);
  for (const field of HEALTH_TIMES) need(health[field] === null || isTime(health[field]), `${where}.${field}`, health[field]);
  for (const field of HEALTH_COUNTS) need(isCount(health[field]), `${where}.${field}`, health[field]);
  // Absent from a leader of an earlier release: read as none (see wire.ts).
  if (health.unknown_keys !== undefined) {
    const unknown = record(health.unknown_keys, `${where}.unknown_keys`);
    need(isCount(unknown.count), `${where}.unknown_keys.count`, unknown.count);
    const sample = array(unknown.sample, `${where}.unknown_keys.sample`);
    need(sample.length <= UNKNOWN_KEY_SAMPLE, `${where}.unknown_keys.sample`, sample);
    sample.forEach((key, i) => need(typeof key === 'string' && key.length <= UNKNOWN_KEY_CHARS, `${where}.unknown_keys.sample[${i}]`, key));
  }
  // Absent from a leader of an earlier release too: nerkh, none mapped, none dropped.
  if (health.format !== undefined) need(FORMATS.has(health.format), `${where}.format`, health.format);
  if (health.mapped !== undefined) need(isCount(health.mapped), `${where}.mapped`, health.mapped);
  if (health.dropped_reasons !== undefined) {
    array(health.dropped_reasons, `${where}.dropped_reasons`).forEach((drop, i) => {
      const at = `${where}.dropped_reasons[${i}]`;
      const fields = record(drop, at);
      need(REASONS.has(fields.reason), `${at}.reason`, fields.reason);
      need(isCount(fields.count), `${at}.count`, fields.count);
      const keys = array(fields.source_keys, `${at}.source_keys`);
      need(keys.length <= DROP_SAMPLE, `${at}.source_keys`, keys);
      keys.forEach((key, j) => need(isKey(key), `${at}.source_keys[${j}]`, key));
    });
  }
}

function record(value: unknown, where: string): Fields {
  need(typeof value === 'object' && value !== null && !Array.isArray(value), where, value);
  return value as Fields;
}

function array(value: unknown, where: string): unknown[] {
  need(Array.isArray(value), where, value);
  return value as unknown[];
}

function isKey(value: unknown): boolean {
  return typeof value === 'string' && KEY_PATTERN.test(value);
}

function isNumberText(value: unknown): boolean {
  return typeof value === 'string' && isDecimalText(value);
}

/** Epoch milliseconds or seconds of age: a finite number (the request path formats it, never pastes it). */
function isTime(value: unknown): boolean {
  return typeof value === 'number' && Number.isFinite(value);
}

function isCount(value: unknown): boolean {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

function need(ok: boolean, where: string, value: unknown): void {
  if (!ok) throw new WireError(`snapshot message refused: ${where} is ${shown(value)}`);
}

/** The offending value, short: it may be anything, of any size. */
function shown(value: unknown): string {
  const text = value === undefined ? 'missing' : JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}

export type RateStatus = 'ok' | 'stale' | 'unavailable';

/** A value as one source gave it: the JSON number text exactly, and its numeric reading for checks. */
export interface SourceValue {
  raw: string;
  value: number;
  /** Epoch milliseconds. */
  updatedAt: number;
}

/** One entry of the detail response, before serialisation. */
export interface Rate {
  key: string;
  title: string;
  /** JSON number text exactly as the source gave it; null when unavailable. */
  value: string | null;
  unit: string;
  source_key: string;
  /** Epoch milliseconds of the value's own update time; null when unavailable. */
  updated_at: number | null;
  status: RateStatus;
  /** Name of the source that supplied the value. */
  source: string | null;
  /** Age of a stale value in whole seconds. */
  stale_seconds?: number;
}

/**
 * Serialise a rate once; the request path only concatenates these strings.
 * `value` is written as the source's own number text, so `300.5` stays `300.5`.
 */
export function serialiseRate(rate: Rate, formatTime: (ms: number) => string): string {
  let json =
    `{"key":${JSON.stringify(rate.key)},"title":${JSON.stringify(rate.title)},"value":${rate.value ?? 'null'}` +
    `,"unit":${JSON.stringify(rate.unit)},"source_key":${JSON.stringify(rate.source_key)}` +
    `,"updated_at":${rate.updated_at === null ? 'null' : JSON.stringify(formatTime(rate.updated_at))}` +
    `,"status":"${rate.status}","source":${rate.source === null ? 'null' : JSON.stringify(rate.source)}`;
  if (rate.stale_seconds !== undefined) json += `,"stale_seconds":${rate.stale_seconds}`;
  return json + '}';
}

/** The legacy feed's entry for a rate, with the Jalali date of its update. */
export function serialiseLegacyEntry(rate: Rate, time: { format(ms: number): string; jalaliDate(ms: number): string }): string {
  const at = rate.updated_at;
  return (
    `{"title":${JSON.stringify(rate.title)},"value":${rate.value ?? 'null'},"unit":${JSON.stringify(rate.unit)}` +
    `,"updated_at":${at === null ? 'null' : JSON.stringify(time.format(at))},"date_jalali":${at === null ? 'null' : JSON.stringify(time.jalaliDate(at))}}`
  );
}

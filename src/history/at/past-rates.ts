import { NO_DAY_FIELDS, type Rate } from '../../domain/rate.js';
import type { Reference } from '../../domain/reference.js';
import type { HistoryReader } from '../history-reader.js';
import { INTERVAL_OF } from '../ranges/buckets.js';

/**
 * The rates of `references` as they were served at `at` (`?at=`): each the
 * close of the candle being served then, with its source and its own update
 * time, status `historical`; `unavailable` (value null) where nothing was
 * served yet. `grain` names the candle length the value was read at, so an
 * answer says whether it is a minute's close or a day's. Market-day fields
 * are not kept for the past: they are null.
 */
export async function ratesAt(reader: HistoryReader, references: readonly Reference[], at: number): Promise<Rate[]> {
  const rates: Rate[] = [];
  for (const reference of references) {
    const found = await reader.at(reference.key, at);
    const candle = found?.candle;
    rates.push({
      key: reference.key,
      title: reference.title,
      unit: reference.unit,
      currency: reference.currency,
      per: reference.per,
      source_key: reference.source_key,
      value: candle?.close ?? null,
      updated_at: candle?.closeAt ?? null,
      status: candle ? 'historical' : 'unavailable',
      source: candle?.source ?? null,
      grain: found ? INTERVAL_OF[found.grain] : null,
      ...NO_DAY_FIELDS,
    });
  }
  return rates;
}

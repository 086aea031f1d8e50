import type { ZoneTime } from '../domain/time.js';
import type { Logger } from '../log.js';
import { describeStoreError } from '../store/errors.js';
import type { Store } from '../store/store.js';
import { Buckets } from './buckets.js';
import { HistoryReader } from './reader.js';
import { HistoryRecorder } from './recorder.js';

/** The recorder (fed by the engine) and the reader (for HTTP) over one store. */
export function openHistory(store: Store, time: ZoneTime, minuteDays: number, logger: Logger): { recorder: HistoryRecorder; reader: HistoryReader } {
  const recorder = new HistoryRecorder(store.history, time, store.health, minuteDays, (error) =>
    logger.warn({ part: 'history', reason: describeStoreError(error) }, 'history store not usable; recording goes on in memory'),
  );
  return { recorder, reader: new HistoryReader(store.history, new Buckets(time), store.health, minuteDays, recorder) };
}

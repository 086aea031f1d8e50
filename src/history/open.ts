import type { ZoneTime } from '../domain/time.js';
import type { Logger } from '../log.js';
import { describeStoreError } from '../store/errors.js';
import type { Store } from '../store/store.js';
import { HistoryReader } from './history-reader.js';
import { Buckets } from './ranges/buckets.js';
import { HistoryRecorder, type RecorderFence } from './record/recorder.js';

/**
 * A recorder (fed by the engine) and a reader (for HTTP) over one store. The
 * reader overlays `readerRecorder`'s unwritten candles, the new recorder's
 * unless given (a node reads through whichever recorder its current spell of
 * leadership has, or none). `fence`: the leader's lease epoch, when several
 * nodes may lead in turn (see HistoryRepository.write).
 */
export function openHistory(
  store: Store,
  time: ZoneTime,
  minuteDays: number,
  logger: Logger,
  readerRecorder?: () => HistoryRecorder | null,
  fence: RecorderFence | null = null,
): { recorder: HistoryRecorder; reader: HistoryReader } {
  const recorder = new HistoryRecorder(
    store.history,
    time,
    store.health,
    minuteDays,
    (error) => logger.warn({ part: 'history', reason: describeStoreError(error) }, 'history store not usable; recording goes on in memory'),
    undefined,
    fence,
  );
  return { recorder, reader: new HistoryReader(store.history, new Buckets(time), store.health, minuteDays, readerRecorder ?? recorder) };
}

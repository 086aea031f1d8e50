import type { Catalogue } from '../catalogue/catalogue.js';
import { writeDemoPast, type BackfillSummary } from '../demo/backfill.js';
import type { ZoneTime } from '../domain/time.js';
import type { Logger } from '../log.js';
import type { HistorySpell } from '../roles/ingest.js';
import { describeStoreError } from '../store/store-errors.js';
import type { Store } from '../store/store.js';

/**
 * The demo's past (src/demo/backfill.ts), for a history that was empty before
 * anything was recorded: written once, for the first spell of leadership,
 * ending where its engine starts, beside the serving process (one reference
 * per transaction, yielding between) once the server listens. It goes
 * through the store like any history; the spell's recorder loads it when it
 * is written (see `IngestOptions.historyWriter`).
 */
export function demoPast(wanted: boolean, store: Store, catalogue: Catalogue, time: ZoneTime, logger: Logger) {
  let listen!: () => void;
  const listened = new Promise<void>((resolve) => (listen = resolve));
  let pending = wanted;
  let stopping = false;
  let written: Promise<BackfillSummary | null> = Promise.resolve(null);
  return {
    writer(spell: HistorySpell): Promise<BackfillSummary | null> | null {
      if (!pending) return null;
      pending = false;
      const until = time.now();
      const stopped = () => stopping || spell.ended();
      written = listened
        .then(() => (stopped() ? null : writeDemoPast(store.history, catalogue, time, logger, { until, epoch: spell.fenceEpoch, stopped })))
        .catch((error: unknown) => {
          logger.warn({ part: 'demo', reason: describeStoreError(error) }, 'demo: history backfill stopped; the past stays partial');
          return null;
        });
      return written;
    },
    listening(): Promise<BackfillSummary | null> {
      listen();
      return written;
    },
    async stop(): Promise<void> {
      stopping = true;
      listen();
      await written;
    },
  };
}

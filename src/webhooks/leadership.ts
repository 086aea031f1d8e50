import type { Catalogue } from '../catalogue/catalogue.js';
import type { Plan } from '../domain/plan.js';
import type { ZoneTime } from '../domain/time.js';
import type { Snapshot } from '../live/snapshot.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/store.js';
import { WebhookProducer } from './producer.js';
import { webhookTimings } from './schedule.js';
import { WebhookSender } from './sender.js';

/** The webhooks of one spell of ingest leadership: fed every snapshot the leader publishes, stopped when it ends. */
export interface WebhookTerm {
  snapshot(snapshot: Snapshot): void;
  stop(): Promise<void>;
}

export interface WebhookTermOptions {
  store: Store;
  catalogue: Catalogue;
  plans: ReadonlyMap<string, Plan>;
  time: ZoneTime;
  logger: Logger;
  allowPrivate: boolean;
  /** NERKH_WEBHOOK_TIME_SCALE (tests only); 1 otherwise. */
  timeScale: number;
  /** The lease epoch of this spell (null: a single process). */
  epoch: number | null;
  /** A newer leader has written webhook states: hand the lease back. */
  onFenced: (fence: number) => void;
}

/** Start the sender and a producer for a new spell of leadership. */
export function openWebhookTerm(options: WebhookTermOptions): WebhookTerm {
  const { store, time, logger } = options;
  const timings = webhookTimings(options.timeScale);
  const sender = new WebhookSender({ webhooks: store.webhooks, time, logger, timings, allowPrivate: options.allowPrivate });
  const producer = new WebhookProducer({
    webhooks: store.webhooks,
    revision: () => store.accounts.revision(),
    catalogue: options.catalogue,
    plans: options.plans,
    time,
    logger,
    timings,
    epoch: options.epoch,
    onQueued: () => sender.wake(),
    onFenced: (fence) => {
      void sender.stop();
      options.onFenced(fence);
    },
  });
  sender.start();
  return {
    snapshot: (snapshot) => producer.snapshot(snapshot),
    async stop() {
      await producer.stop();
      await sender.stop();
    },
  };
}

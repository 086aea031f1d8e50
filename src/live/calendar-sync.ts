import type { Notices } from '../bus/notices.js';
import { CoalescedRun } from '../domain/coalesced-run.js';
import type { Logger } from '../log.js';
import type { DeclaredDay, Markets } from './markets.js';

/** What the sync needs of the store (store/market-calendar-repository.ts). */
export interface CalendarStore {
  revision(): Promise<number>;
  list(): Promise<DeclaredDay[]>;
}

/** How often every node looks whether the calendar changed; a change notice makes it look at once. */
export const CALENDAR_POLL_MS = 1000;

/**
 * Keeps this node's markets in step with the operators' declarations in the
 * store: it rereads them when the calendar revision moved, looked at every
 * second and at once on a `calendar` change notice (`nerkh calendar close|open`
 * announces one over Redis), so every node applies a change within the
 * notice's delivery, or a second when the notice is lost.
 */
export class CalendarSync {
  private seen: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  private unlisten: (() => void) | null = null;
  private readonly looking = new CoalescedRun(() => this.read());

  constructor(
    private readonly markets: Markets,
    private readonly store: CalendarStore,
    private readonly notices: Notices | null,
    private readonly logger: Logger,
    private readonly pollMs = CALENDAR_POLL_MS,
  ) {}

  /** Read the declarations once (a node starts with them), then keep looking. */
  async start(): Promise<void> {
    await this.look();
    this.timer = setInterval(() => void this.look(), this.pollMs);
    this.timer.unref();
    this.unlisten = this.notices?.onNotice((kind) => {
      if (kind === 'calendar') void this.look();
    }) ?? null;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.unlisten?.();
    this.unlisten = null;
  }

  /** Look whether the revision moved and reread if it did; a look asked for during one runs after it. */
  look(): Promise<void> {
    return this.looking.run();
  }

  private async read(): Promise<void> {
    try {
      const revision = await this.store.revision();
      if (revision === this.seen) return;
      const declared = await this.store.list();
      this.seen = revision;
      this.markets.apply(declared);
    } catch (error) {
      this.logger.warn({ part: 'calendar', err: (error as Error).message }, 'market calendar not readable from the store; kept as it was');
    }
  }
}

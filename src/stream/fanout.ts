import type { Subscriber } from './sink.js';

/**
 * How much of the queued writing one turn of the event loop does before it
 * yields: a time budget (what the hub uses), or a number of streams (kept for
 * measuring one against the other; docs/performance.md#push-stream).
 */
export type SliceBudget = { ms: number } | { streams: number };

/** The clock is read once per this many streams: about 0.3 ms of writes, and a negligible cost beside them. */
const CLOCK_EVERY = 32;

/**
 * One frame for a set of streams. `members` is a live iterator of the set
 * (streams that leave are passed over, streams that join are visited), kept
 * across slices; `visit` writes to one stream, or passes it over.
 */
export interface FanoutJob {
  readonly members: IterableIterator<Subscriber>;
  visit(subscriber: Subscriber): void;
  /** Every member has been visited. */
  finished(): void;
}

/**
 * Writes queued jobs in slices: up to the budget in one turn of the event
 * loop, then `setImmediate` and on, so that requests, timers and pings are
 * served between slices while one event goes to thousands of streams. Events
 * go first, in the order queued; pings only when no event is waiting. A job
 * queued while the loop is free starts at once, in the caller's turn.
 */
export class FanoutQueue {
  private readonly events: FanoutJob[] = [];
  private readonly pings: FanoutJob[] = [];
  private running = false;
  private next: NodeJS.Immediate | null = null;
  private readonly slices = { count: 0, maxSeconds: 0 };

  constructor(private readonly budget: SliceBudget) {}

  /** Turns of the event loop that wrote, and the longest one's writing, in seconds. */
  get sliceCounts(): { count: number; maxSeconds: number } {
    return { ...this.slices };
  }

  get idle(): boolean {
    return this.events.length === 0 && this.pings.length === 0;
  }

  event(job: FanoutJob): void {
    this.events.push(job);
    this.start();
  }

  ping(job: FanoutJob): void {
    this.pings.push(job);
    this.start();
  }

  /** Forgets every job (shutdown: the streams are ended anyway). */
  clear(): void {
    this.events.length = 0;
    this.pings.length = 0;
    if (this.next) clearImmediate(this.next);
    this.next = null;
  }

  private start(): void {
    // Inside a slice (a job's `finished` queued the next) or with one scheduled: that one takes it.
    if (!this.running && this.next === null) this.slice();
  }

  private slice(): void {
    this.next = null;
    this.running = true;
    const started = performance.now();
    const budget = this.budget;
    const limitMs = 'ms' in budget ? budget.ms : Infinity;
    const limitStreams = 'streams' in budget ? budget.streams : Infinity;
    let visited = 0;
    let spent = false;
    try {
      while (!spent) {
        const job = this.events[0] ?? this.pings[0];
        if (!job) break;
        let completed = true;
        for (const member of job.members) {
          job.visit(member);
          visited++;
          if (visited >= limitStreams || (visited % CLOCK_EVERY === 0 && performance.now() - started >= limitMs)) {
            spent = true;
            completed = false;
            break;
          }
        }
        // A job whose last member ended the slice is finished at the next one, which finds nothing left to visit.
        if (completed) {
          (job === this.events[0] ? this.events : this.pings).shift();
          job.finished();
        }
      }
    } finally {
      this.running = false;
      const seconds = (performance.now() - started) / 1000;
      this.slices.count++;
      if (seconds > this.slices.maxSeconds) this.slices.maxSeconds = seconds;
      if (!this.idle) this.next = setImmediate(() => this.slice());
    }
  }
}

import type { ZoneTime } from '../domain/time.js';
import type { SnapshotHistory } from '../live/history.js';
import type { Snapshot } from '../live/snapshot.js';
import { eventFrame, PING_FRAME, ratesData } from './frames.js';
import { Subscriber, type DropReason, type SinkLimits, type StreamSink } from './sink.js';

export interface StreamOptions extends SinkLimits {
  /** A `: ping` comment this often. */
  pingMs: number;
  /**
   * How often every tier checks for its next boundary. A snapshot push is
   * delivered at once; this catches boundaries that pass with no push (and a
   * clock moved by a test).
   */
  tickMs: number;
}

export const DEFAULT_STREAM_OPTIONS: StreamOptions = { pingMs: 15_000, tickMs: 100, stallMs: 10_000, maxBufferedBytes: 1 << 20 };

/** What one stream receives: a refresh tier and its references, in order. */
export interface Selection {
  intervalSeconds: number;
  keys: readonly string[];
  /**
   * Streams with equal tags and tiers share their frames: the allowance set
   * for whole-allowance streams (accounts on one plan share it), the key list
   * for explicit ones.
   */
  tag: object | string;
}

export interface StreamCounts {
  open: number;
  events: number;
  dropped: Record<DropReason, number>;
  /** Events written to a whole group: how many, their writing time summed and the longest, in seconds. */
  fanouts: { count: number; seconds: number; maxSeconds: number };
}

/**
 * Streams with the same tier and references. Each event is built once per
 * snapshot for the whole group and written to every member as the same bytes;
 * a group lives only while it has members, so the number of cached key lists
 * is bounded by the open streams.
 */
class Group {
  readonly members = new Set<Subscriber>();
  private snapshotFrame: { version: number; frame: Buffer } | null = null;

  constructor(
    readonly id: string,
    private readonly selection: Selection,
    /** The snapshot the members were last brought up to. */
    public sent: Snapshot,
  ) {}

  get intervalSeconds(): number {
    return this.selection.intervalSeconds;
  }

  /** The whole current state, for a new or resuming member. */
  snapshotEvent(generatedAt: string): Buffer {
    if (this.snapshotFrame?.version !== this.sent.version) {
      const rates: string[] = [];
      for (const key of this.selection.keys) {
        const prepared = this.sent.rates.get(key);
        if (prepared) rates.push(prepared.json);
      }
      this.snapshotFrame = { version: this.sent.version, frame: eventFrame('snapshot', this.sent.version, ratesData(generatedAt, rates)) };
    }
    return this.snapshotFrame.frame;
  }

  /** Moves to `next`; the `rates` event of what changed, or null when nothing this group reads did. */
  advance(next: Snapshot, generatedAt: string): Buffer | null {
    const previous = this.sent;
    this.sent = next;
    const changed: string[] = [];
    for (const key of this.selection.keys) {
      const now = next.rates.get(key);
      if (now && previous.rates.get(key)?.json !== now.json) changed.push(now.json);
    }
    return changed.length === 0 ? null : eventFrame('rates', next.version, ratesData(generatedAt, changed));
  }
}

/**
 * Every open push stream of this process. It needs only the snapshot history
 * and its push notice: each tier sees the snapshot as of its last wall-clock
 * boundary, the same one the detail endpoint serves.
 */
export class StreamHub {
  private readonly groups = new Map<string, Group>();
  private readonly tagIds = new WeakMap<object, number>();
  private nextTagId = 1;
  private readonly groupOf = new Map<Subscriber, Group>();
  private ticker: NodeJS.Timeout | null = null;
  private pinger: NodeJS.Timeout | null = null;
  private readonly unsubscribe: () => void;
  private events = 0;
  private readonly dropped: Record<DropReason, number> = { stalled: 0, buffer: 0 };
  private readonly fanouts = { count: 0, seconds: 0, maxSeconds: 0 };
  private readonly options: StreamOptions;

  constructor(
    private readonly history: SnapshotHistory,
    private readonly time: ZoneTime,
    options: Partial<StreamOptions> = {},
  ) {
    this.options = { ...DEFAULT_STREAM_OPTIONS, ...options };
    this.unsubscribe = history.onPush(() => this.tick());
  }

  /** Adds a stream and sends it the full `snapshot` event; `onClose` runs once when it ends, however it ends. */
  open(sink: StreamSink, selection: Selection, onClose: () => void): void {
    const now = this.time.now();
    const group = this.groupFor(selection, now);
    const subscriber = new Subscriber(
      sink,
      this.options,
      (_subscriber, reason) => this.dropped[reason]++,
      (closed) => {
        this.leave(closed);
        onClose();
      },
    );
    group.members.add(subscriber);
    this.groupOf.set(subscriber, group);
    this.startTimers();
    subscriber.send(group.snapshotEvent(this.time.format(now)));
    this.events++;
  }

  counts(): StreamCounts {
    return { open: this.groupOf.size, events: this.events, dropped: { ...this.dropped }, fanouts: { ...this.fanouts } };
  }

  /** Ends every stream at once (shutdown): clients reconnect, and nothing here delays the drain. */
  closeAll(): void {
    for (const subscriber of [...this.groupOf.keys()]) subscriber.end();
    this.stopTimers();
  }

  stop(): void {
    this.closeAll();
    this.unsubscribe();
  }

  /** Brings every group to its tier's current snapshot, sending what changed. */
  tick(now = this.time.now()): void {
    let generatedAt: string | null = null;
    for (const group of this.groups.values()) {
      const current = this.history.forInterval(group.intervalSeconds, now);
      if (current === group.sent) continue;
      generatedAt ??= this.time.format(now);
      const frame = group.advance(current, generatedAt);
      if (!frame) continue;
      // Wall time of the loop (not the injectable clock): how long the last member waits behind the first.
      const started = performance.now();
      for (const member of group.members) member.send(frame);
      this.events += group.members.size;
      const seconds = (performance.now() - started) / 1000;
      this.fanouts.count++;
      this.fanouts.seconds += seconds;
      this.fanouts.maxSeconds = Math.max(this.fanouts.maxSeconds, seconds);
    }
  }

  private groupFor(selection: Selection, now: number): Group {
    const id = `${selection.intervalSeconds}|${this.tagOf(selection.tag)}`;
    const current = this.history.forInterval(selection.intervalSeconds, now);
    let group = this.groups.get(id);
    if (!group) {
      group = new Group(id, selection, current);
      this.groups.set(id, group);
    } else if (group.sent !== current) {
      // Members get their changes before the newcomer's snapshot is built from the same state.
      this.tick(now);
    }
    return group;
  }

  private tagOf(tag: object | string): string {
    if (typeof tag === 'string') return `k:${tag}`;
    let id = this.tagIds.get(tag);
    if (id === undefined) {
      id = this.nextTagId++;
      this.tagIds.set(tag, id);
    }
    return `a:${id}`;
  }

  private leave(subscriber: Subscriber): void {
    const group = this.groupOf.get(subscriber);
    if (!group) return;
    this.groupOf.delete(subscriber);
    group.members.delete(subscriber);
    if (group.members.size === 0) this.groups.delete(group.id);
    if (this.groupOf.size === 0) this.stopTimers();
  }

  private startTimers(): void {
    if (this.ticker) return;
    this.ticker = setInterval(() => this.tick(), this.options.tickMs);
    this.ticker.unref();
    this.pinger = setInterval(() => this.ping(), this.options.pingMs);
    this.pinger.unref();
  }

  private stopTimers(): void {
    if (this.ticker) clearInterval(this.ticker);
    if (this.pinger) clearInterval(this.pinger);
    this.ticker = this.pinger = null;
  }

  private ping(): void {
    for (const subscriber of [...this.groupOf.keys()]) subscriber.send(PING_FRAME);
  }
}

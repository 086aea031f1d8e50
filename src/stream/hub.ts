import type { ZoneTime } from '../domain/time.js';
import type { RateUnit } from '../domain/units.js';
import { preparedIn } from '../live/prepare.js';
import type { RefreshTiers } from '../live/refresh-tiers.js';
import type { Snapshot } from '../live/snapshot.js';
import type { StreamAlerts } from './alerts.js';
import { FanoutQueue, type FanoutJob, type SliceBudget } from './fanout.js';
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
  /**
   * How long one turn of the event loop may spend writing an event (or a
   * ping) to streams before it yields: detail requests and timers are served
   * between slices. 3 ms keeps the loop's lag during a fan-out to 10,000
   * streams within a few ms at almost no cost to the last stream's delivery
   * (docs/performance.md#push-stream).
   */
  slice: SliceBudget;
}

export const DEFAULT_STREAM_OPTIONS: StreamOptions = { pingMs: 15_000, tickMs: 100, stallMs: 10_000, maxBufferedBytes: 1 << 20, slice: { ms: 3 } };

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
  /** `?unit=`: rial prices as given, or in toman (docs/api.md#units-and-precision). */
  unit: RateUnit;
}

export interface StreamCounts {
  open: number;
  events: number;
  /** `alert` events written (each rule that fired for a stream is one). */
  alerts: number;
  dropped: Record<DropReason, number>;
  /**
   * Events written to a whole group: how many, and in seconds the time from
   * each being ready to its last member's write (its slices and the loop's
   * other work between them), summed and the longest.
   */
  fanouts: { count: number; seconds: number; maxSeconds: number };
  /** Turns of the event loop that wrote events or pings, and the longest one's writing in seconds. */
  slices: { count: number; maxSeconds: number };
}

/**
 * Streams with the same tier, unit and references. Each event is built once per
 * snapshot for the whole group and written to every member as the same bytes;
 * a group lives only while it has members, so the number of cached key lists
 * is bounded by the open streams.
 */
class Group {
  readonly members = new Set<Subscriber>();
  /** Events built for this group so far; a member's `position` says how many it has. */
  position = 0;
  /** An event is being written to the members: the next waits for it, built against what this one carried. */
  writing = false;
  private snapshotFrame: { version: number; frame: Buffer } | null = null;
  /** The keys as a set, made the first time a member with alerts asks. */
  private keySet: ReadonlySet<string> | null = null;
  private readonly reads = (key: string) => (this.keySet ??= new Set(this.selection.keys)).has(key);

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
        if (prepared) rates.push(preparedIn(prepared, this.selection.unit).json);
      }
      this.snapshotFrame = { version: this.sent.version, frame: eventFrame('snapshot', this.sent.version, ratesData(generatedAt, rates)) };
    }
    return this.snapshotFrame.frame;
  }

  /** A member's alert events for the state it has just been sent (`sent`: what this group is at, or writing). */
  alertsFor(alerts: StreamAlerts): Buffer | null {
    return alerts.frames(this.sent.rates, this.selection.unit, this.reads);
  }

  /** Moves to `next`; the `rates` event of what changed, or null when nothing this group reads did. */
  advance(next: Snapshot, generatedAt: string): Buffer | null {
    const previous = this.sent;
    this.sent = next;
    const changed: string[] = [];
    for (const key of this.selection.keys) {
      const now = next.rates.get(key);
      // The toman form follows from the rial one: comparing the rial bytes is enough.
      if (now && previous.rates.get(key)?.json !== now.json) changed.push(preparedIn(now, this.selection.unit).json);
    }
    return changed.length === 0 ? null : eventFrame('rates', next.version, ratesData(generatedAt, changed));
  }
}

/** One `rates` event to a group's members, slice by slice. */
class EventWrite implements FanoutJob {
  readonly members: IterableIterator<Subscriber>;
  private readonly from: number;
  private readonly to: number;
  written = 0;
  alerted = 0;

  constructor(
    readonly group: Group,
    private readonly frame: Buffer,
    /** performance.now() when the event was ready. */
    readonly readyAt: number,
    private readonly onFinished: (write: EventWrite) => void,
  ) {
    this.members = group.members.values();
    this.from = group.position;
    this.to = ++group.position;
    group.writing = true;
  }

  visit(member: Subscriber): void {
    // Members that joined after this event was built already hold it (in their snapshot).
    if (member.position !== this.from) return;
    member.position = this.to;
    member.send(this.frame);
    this.written++;
    // Only a stream with rules reads anything more; `group.sent` is this event's state until it is written to all.
    if (member.alerts !== null) this.alerted += sendAlerts(member, this.group);
  }

  finished(): void {
    this.group.writing = false;
    this.onFinished(this);
  }
}

/** The member's alert events for the state its group has just sent it, right behind that state; how many. */
function sendAlerts(member: Subscriber, group: Group): number {
  const alerts = member.alerts!;
  const before = alerts.sent;
  const frame = group.alertsFor(alerts);
  if (frame === null) return 0;
  member.send(frame);
  return alerts.sent - before;
}

/** A `: ping` to every open stream, in slices like an event, and only while no event waits. */
class PingWrite implements FanoutJob {
  constructor(readonly members: IterableIterator<Subscriber>) {}

  visit(member: Subscriber): void {
    member.send(PING_FRAME);
  }

  finished(): void {}
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
  private alerts = 0;
  private readonly dropped: Record<DropReason, number> = { stalled: 0, buffer: 0 };
  private readonly fanouts = { count: 0, seconds: 0, maxSeconds: 0 };
  private readonly options: StreamOptions;
  private readonly queue: FanoutQueue;
  private readonly writeFinished = (write: EventWrite) => this.finished(write);
  /** The last `generated_at` formatted, for the groups that advance at the same moment. */
  private stamp = { at: NaN, text: '' };

  constructor(
    private readonly history: RefreshTiers,
    private readonly time: ZoneTime,
    options: Partial<StreamOptions> = {},
  ) {
    this.options = { ...DEFAULT_STREAM_OPTIONS, ...options };
    this.queue = new FanoutQueue(this.options.slice);
    this.unsubscribe = history.onPush(() => this.tick());
  }

  /**
   * Adds a stream and sends it the full `snapshot` event; `onClose` runs once
   * when it ends, however it ends. The subscriber returned is the stream's
   * handle: `end()` it, or `reselect` it. `alerts`: the stream's rules, read
   * at its snapshot and at each of its `rates` events (they keep their states
   * across a reselect).
   */
  open(sink: StreamSink, selection: Selection, onClose: () => void, alerts: StreamAlerts | null = null): Subscriber {
    const subscriber = new Subscriber(
      sink,
      this.options,
      (_subscriber, reason) => this.dropped[reason]++,
      (closed) => {
        this.leave(closed);
        onClose();
      },
    );
    subscriber.alerts = alerts;
    this.join(subscriber, selection);
    return subscriber;
  }

  /**
   * Moves an open stream to another selection (its plan changed what it may
   * read, or how often): it leaves its group and gets a full `snapshot` event
   * of the new selection, which replaces what it held, as after a reconnect.
   */
  reselect(subscriber: Subscriber, selection: Selection): void {
    if (!subscriber.open || !this.groupOf.has(subscriber)) return;
    this.leave(subscriber);
    this.join(subscriber, selection);
  }

  counts(): StreamCounts {
    return { open: this.groupOf.size, events: this.events, alerts: this.alerts, dropped: { ...this.dropped }, fanouts: { ...this.fanouts }, slices: this.queue.sliceCounts };
  }

  /** Ends every stream at once (shutdown): clients reconnect, and nothing here delays the drain. */
  closeAll(): void {
    this.queue.clear();
    for (const subscriber of [...this.groupOf.keys()]) subscriber.end();
    this.stopTimers();
  }

  stop(): void {
    this.closeAll();
    this.unsubscribe();
  }

  /**
   * Brings every group to its tier's current snapshot, queueing what changed;
   * the writing starts at once and goes on in slices (FanoutQueue). A group
   * still writing its last event is brought up when that one is done, in one
   * event of everything that changed meanwhile: a `rates` event holds only
   * changes, so none may be skipped, and none may overtake the one before.
   */
  tick(now = this.time.now()): void {
    for (const group of this.groups.values()) this.bringUp(group, now);
  }

  private bringUp(group: Group, now: number): void {
    if (group.writing) return;
    const current = this.history.forInterval(group.intervalSeconds, now);
    if (current === group.sent) return;
    const frame = group.advance(current, this.generatedAt(now));
    // Wall time (not the injectable clock): how long the last member waits behind the first.
    if (frame) this.queue.event(new EventWrite(group, frame, performance.now(), this.writeFinished));
  }

  private finished(write: EventWrite): void {
    this.events += write.written;
    this.alerts += write.alerted;
    const seconds = (performance.now() - write.readyAt) / 1000;
    this.fanouts.count++;
    this.fanouts.seconds += seconds;
    this.fanouts.maxSeconds = Math.max(this.fanouts.maxSeconds, seconds);
    // A snapshot may have come while it was written; a group emptied meanwhile is gone.
    if (this.groups.get(write.group.id) === write.group) this.bringUp(write.group, this.time.now());
  }

  private generatedAt(now: number): string {
    if (this.stamp.at !== now) this.stamp = { at: now, text: this.time.format(now) };
    return this.stamp.text;
  }

  private groupFor(selection: Selection, now: number): Group {
    const id = `${selection.intervalSeconds}|${selection.unit}|${this.tagOf(selection.tag)}`;
    const current = this.history.forInterval(selection.intervalSeconds, now);
    let group = this.groups.get(id);
    if (!group) {
      group = new Group(id, selection, current);
      this.groups.set(id, group);
    } else if (group.sent !== current) {
      // Members get their changes queued before the newcomer's snapshot is built from the same state (or, while
      // the group is still writing, the newcomer starts from the state being written and gets the rest with them).
      this.bringUp(group, now);
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

  private join(subscriber: Subscriber, selection: Selection): void {
    const now = this.time.now();
    const group = this.groupFor(selection, now);
    group.members.add(subscriber);
    subscriber.position = group.position;
    this.groupOf.set(subscriber, group);
    this.startTimers();
    subscriber.send(group.snapshotEvent(this.time.format(now)));
    this.events++;
    // A rule already true at the stream's first snapshot fires here, once (docs/api.md#stream-alerts).
    if (subscriber.alerts !== null) this.alerts += sendAlerts(subscriber, group);
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
    this.queue.ping(new PingWrite(this.groupOf.keys()));
  }
}

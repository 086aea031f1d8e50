import type { StreamAlerts } from './alerts.js';

/** The part of a writable socket or HTTP response a stream writes to. */
export interface StreamSink {
  write(chunk: Buffer): boolean;
  readonly writableLength: number;
  end(): void;
  destroy(): void;
  once(event: 'drain' | 'close', listener: () => void): unknown;
}

export interface SinkLimits {
  /** A sink whose buffer stays full this long is dropped. */
  stallMs: number;
  /** A sink holding more unsent bytes than this is dropped at once. */
  maxBufferedBytes: number;
}

export type DropReason = 'stalled' | 'buffer';

/**
 * One subscriber's connection. Every frame goes to the socket's own buffer;
 * when that stays full (the client stopped reading) the subscriber is dropped,
 * so a slow client costs at most `maxBufferedBytes` and never holds frames here.
 */
export class Subscriber {
  /**
   * The hub's mark: the number of its group's events this stream has been
   * brought to. An event is written only to members one behind it, so a
   * stream that joins while one is being written (its snapshot already holds
   * that change) is passed over, and none gets an event twice or out of order.
   */
  position = 0;
  /** The stream's `?alerts=` rules and their states; null for a stream without (the hub then does nothing more per event). */
  alerts: StreamAlerts | null = null;
  private stallTimer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly sink: StreamSink,
    private readonly limits: SinkLimits,
    private readonly onDrop: (subscriber: Subscriber, reason: DropReason) => void,
    private readonly onClose: (subscriber: Subscriber) => void,
  ) {
    sink.once('close', () => this.finish());
  }

  get open(): boolean {
    return !this.closed;
  }

  send(frame: Buffer): void {
    if (this.closed) return;
    const flushed = this.sink.write(frame);
    if (this.sink.writableLength > this.limits.maxBufferedBytes) return this.drop('buffer');
    if (!flushed && this.stallTimer === null) {
      this.stallTimer = setTimeout(() => this.drop('stalled'), this.limits.stallMs);
      this.stallTimer.unref();
      this.sink.once('drain', () => this.clearStall());
    }
  }

  /**
   * A clean end: the client sees the stream finish and reconnects (elsewhere,
   * on shutdown), after `lastFrame` when given (why it ended). A client that
   * stopped reading cannot hold the connection open past the stall time.
   */
  end(lastFrame?: Buffer): void {
    if (this.closed) return;
    if (lastFrame) this.sink.write(lastFrame);
    this.sink.end();
    const linger = setTimeout(() => this.sink.destroy(), this.limits.stallMs);
    linger.unref();
    this.sink.once('close', () => clearTimeout(linger));
    this.finish();
  }

  private drop(reason: DropReason): void {
    if (this.closed) return;
    this.onDrop(this, reason);
    this.sink.destroy();
    this.finish();
  }

  private clearStall(): void {
    if (this.stallTimer) clearTimeout(this.stallTimer);
    this.stallTimer = null;
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.clearStall();
    this.onClose(this);
  }
}

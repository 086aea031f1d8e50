/** A live line waits this long before its first drawing: work done sooner shows nothing. */
const LIVE_DELAY_MS = 1000;
/** A live line is redrawn at most this often. */
const LIVE_EVERY_MS = 250;

/**
 * Progress of a long command on stderr. On a terminal (and no interval
 * asked for) one line redrawn in place; otherwise a line every `everyMs`.
 * Nothing is printed before the first one is due, so short work stays quiet.
 */
export class ProgressLine {
  private readonly live: boolean;
  /** Between two reports; 0: none at all. */
  private readonly intervalMs: number;
  private nextAt: number;
  private drawn = false;

  /** `everyMs`: null for the default (live on a terminal, else every `fallbackMs`); 0 prints nothing. */
  constructor(
    private readonly stream: NodeJS.WriteStream,
    everyMs: number | null,
    fallbackMs: number,
  ) {
    this.live = everyMs === null && stream.isTTY === true;
    this.intervalMs = this.live ? LIVE_EVERY_MS : (everyMs ?? fallbackMs);
    this.nextAt = performance.now() + (this.live ? LIVE_DELAY_MS : this.intervalMs);
  }

  /** Report, if a report is due; `text` is only built then. */
  update(text: () => string): void {
    if (this.intervalMs === 0) return;
    const now = performance.now();
    if (now < this.nextAt) return;
    this.nextAt = now + this.intervalMs;
    if (this.live) {
      this.stream.write(`\r\x1b[K${text()}`);
      this.drawn = true;
    } else this.stream.write(`${text()}\n`);
  }

  /** Clear a live line, so what is printed next starts on a clean one. */
  end(): void {
    if (this.drawn) this.stream.write('\r\x1b[K');
    this.drawn = false;
  }
}

/** `count` per second over `ms`, rounded for reading. */
export function perSecond(count: number, ms: number): string {
  const rate = ms > 0 ? (count * 1000) / ms : 0;
  return String(rate >= 100 ? Math.round(rate / 10) * 10 : Math.round(rate));
}

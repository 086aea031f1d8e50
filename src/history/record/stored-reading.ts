/**
 * Something read from the store in the background, for a node that does not
 * record it itself: asked for, it answers with what it last read and starts a
 * fresh read when that is older than `everyMs`, so a page or a status request
 * never waits on the store. A read that fails is tried again `retryMs` later.
 */
export class StoredReading<T> {
  private value: T | null = null;
  private readAt = -Infinity;
  private reading = false;

  constructor(
    private readonly read: (now: number) => Promise<T>,
    /** Whether the store is known to answer: while it does not, no read is tried (its ping brings it back). */
    private readonly reachable: () => boolean,
    private readonly everyMs: number,
    private readonly retryMs: number,
  ) {}

  /** What was last read; null until the first read lands. Starts a fresh read when due. */
  get(now: number): T | null {
    if (!this.reading && now - this.readAt >= this.everyMs && this.reachable()) void this.refresh(now);
    return this.value;
  }

  private async refresh(now: number): Promise<void> {
    this.reading = true;
    try {
      this.value = await this.read(now);
      this.readAt = now;
    } catch {
      // The store's health is reported where it is watched; the reader keeps what it last had and asks again.
      this.readAt = now - this.everyMs + this.retryMs;
    } finally {
      this.reading = false;
    }
  }
}

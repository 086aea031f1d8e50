/**
 * Open streams per account, counted so `max_streams` holds across every node.
 * Two twins: in-process (one node) and Redis-backed (several).
 */
export interface StreamSlots {
  /** Takes a slot for `streamId` unless the account already holds `max`; false when it does. */
  acquire(accountId: string, streamId: string, max: number): Promise<boolean>;
  release(accountId: string, streamId: string): void;
  close(): Promise<void>;
}

export class MemoryStreamSlots implements StreamSlots {
  private readonly held = new Map<string, Set<string>>();

  async acquire(accountId: string, streamId: string, max: number): Promise<boolean> {
    let streams = this.held.get(accountId);
    if (!streams) this.held.set(accountId, (streams = new Set()));
    if (streams.size >= max) return false;
    streams.add(streamId);
    return true;
  }

  release(accountId: string, streamId: string): void {
    const streams = this.held.get(accountId);
    if (!streams) return;
    streams.delete(streamId);
    if (streams.size === 0) this.held.delete(accountId);
  }

  async close(): Promise<void> {}
}

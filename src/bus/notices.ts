/**
 * What changed in the store: every node reloads its key directory on an
 * account, key or plan change; the ingest leader rereads manual prices on a
 * price change; every node rereads the market calendar on a calendar change.
 */
export const NOTICE_KINDS = ['accounts', 'keys', 'plans', 'prices', 'calendar'] as const;
export type NoticeKind = (typeof NOTICE_KINDS)[number];

/**
 * Change notices: an account, key, plan or price change announced to every
 * node, so a revoked key stops working everywhere within 500 ms and a price
 * set by hand is served at once. Best effort: the
 * store's revision poll stays as the fallback for a notice that is lost.
 */
export interface Notices {
  /** Announce a change. Never rejects; a notice that cannot be sent is left to the poll. */
  notify(kind: NoticeKind): Promise<void>;
  onNotice(listener: (kind: NoticeKind) => void): () => void;
  readonly healthy: boolean;
  start(): Promise<void>;
  close(): Promise<void>;
}

/** The embedded twin: one process, so a notice goes straight to its listeners. */
export class LocalNotices implements Notices {
  private readonly listeners = new Set<(kind: NoticeKind) => void>();
  readonly healthy = true;

  async notify(kind: NoticeKind): Promise<void> {
    for (const listener of this.listeners) listener(kind);
  }

  onNotice(listener: (kind: NoticeKind) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.listeners.clear();
  }
}

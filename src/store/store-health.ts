import { describeStoreError } from './store-errors.js';

export interface StoreState {
  reachable: boolean;
  /** Since when (epoch ms) the store has been in this state. */
  since: number;
  /** Why it is unreachable, in a few words; null while reachable. */
  error: string | null;
}

/**
 * Whether the store answers, as last seen by any part that used it (a ping,
 * a flush, a reload, a dropped pooled connection). Reads are free, so the
 * request path and status pages can ask as often as they like.
 */
export class StoreHealth {
  private current: StoreState;
  private readonly listeners: ((state: StoreState) => void)[] = [];

  constructor(now: number) {
    this.current = { reachable: true, since: now, error: null };
  }

  get state(): StoreState {
    return this.current;
  }

  get reachable(): boolean {
    return this.current.reachable;
  }

  onChange(listener: (state: StoreState) => void): void {
    this.listeners.push(listener);
  }

  succeeded(now: number): void {
    if (!this.current.reachable) this.set({ reachable: true, since: now, error: null });
  }

  failed(error: unknown, now: number): void {
    const reason = typeof error === 'string' ? error : describeStoreError(error);
    if (this.current.reachable || this.current.error !== reason) this.set({ reachable: false, since: this.current.reachable ? now : this.current.since, error: reason });
  }

  private set(state: StoreState): void {
    this.current = state;
    for (const listener of this.listeners) listener(state);
  }
}

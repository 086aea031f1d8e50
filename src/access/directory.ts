import type { Catalogue } from '../catalogue/catalogue.js';
import { applyOverrides, type Plan, type Service } from '../domain/plan.js';
import type { Account } from '../store/account-repository.js';
import type { Store } from '../store/store.js';
import { hashKey } from '../domain/key-material.js';
import type { LimitSpec } from './limiter/limiter.js';

/** Everything a request needs to know of an account, built once per reload, shared by its keys. */
export interface AccountAccess {
  id: string;
  username: string;
  active: boolean;
  plan: Plan;
  services: ReadonlySet<Service>;
  /** The references this account may read; null: every reference. */
  allowance: ReadonlySet<string> | null;
  /** Allowed browser origins; null: any. */
  origins: ReadonlySet<string> | null;
  /** The plan's request limits, as the limiter takes them (built once, not per request). */
  limits: LimitSpec;
}

export interface KeyAccess {
  id: string;
  /** The stored hash: what finds this key's entry again after a reload (an open stream re-checks by it). */
  hash: string;
  /** Epoch ms, or null for no expiry. */
  expiresAt: number | null;
  account: AccountAccess;
}

const POLL_MS = 500;
const MAX_REMEMBERED_KEYS = 100_000;

/**
 * Accounts and keys held in memory, keyed by key hash. It reloads whenever
 * the store's revision moves, which every CLI change bumps, so a key issued or
 * revoked in another process works (or stops) within a second; with Redis a
 * change notice makes every node look at once (roles/serving.ts).
 */
export class AccessDirectory {
  private byHash = new Map<string, KeyAccess>();
  private byKey = new Map<string, KeyAccess>();
  private byUsername = new Map<string, AccountAccess>();
  private revision = -1;
  /** The last load's shared allowance, services and limit objects, reused by the next (see Interner). */
  private interned: Interner | null = null;
  private timer: NodeJS.Timeout | null = null;
  private polling = false;
  private again = false;
  private readonly reloadListeners = new Set<() => void>();

  constructor(
    private readonly store: Store,
    private readonly plans: ReadonlyMap<string, Plan>,
    private readonly catalogue: Catalogue,
    private readonly onError: (error: unknown) => void = () => {},
    private readonly pollMs = POLL_MS,
  ) {}

  lookup(hash: string): KeyAccess | undefined {
    return this.byHash.get(hash);
  }

  /**
   * A presented key to its entry. Keys seen before are found without hashing:
   * the map lives in memory only and is rebuilt empty at every reload, so a
   * revoked key stops working as soon as the directory does. Only keys that
   * matched are remembered, so guessing cannot grow it.
   */
  /** A key matched before (so well-formed), without hashing anything; undefined for any other. */
  knownKey(key: string): KeyAccess | undefined {
    return this.byKey.get(key);
  }

  lookupKey(key: string): KeyAccess | undefined {
    const known = this.byKey.get(key);
    if (known) return known;
    const access = this.byHash.get(hashKey(key));
    if (access && this.byKey.size < MAX_REMEMBERED_KEYS) this.byKey.set(key, access);
    return access;
  }

  account(username: string): AccountAccess | undefined {
    return this.byUsername.get(username);
  }

  get keyCount(): number {
    return this.byHash.size;
  }

  async load(): Promise<void> {
    const revision = await this.store.accounts.revision();
    const [accounts, credentials] = await Promise.all([this.store.accounts.list(), this.store.keys.credentials()]);
    const byId = new Map<string, AccountAccess>();
    const byUsername = new Map<string, AccountAccess>();
    const shared = new Interner(this.interned);
    for (const account of accounts) {
      const access = this.accessFor(account, shared);
      byId.set(account.id, access);
      byUsername.set(account.username, access);
    }
    const byHash = new Map<string, KeyAccess>();
    for (const credential of credentials) {
      const account = byId.get(credential.account_id);
      if (account) byHash.set(credential.hash, { id: credential.id, hash: credential.hash, expiresAt: credential.expires_at, account });
    }
    this.byHash = byHash;
    this.byKey = new Map();
    this.byUsername = byUsername;
    this.revision = revision;
    this.interned = shared;
    for (const listener of this.reloadListeners) listener();
  }

  /**
   * Called after every reload, once the new entries are in place: what holds
   * access past one request (an open stream) checks itself again here.
   * Listeners must not throw.
   */
  onReload(listener: () => void): () => void {
    this.reloadListeners.add(listener);
    return () => this.reloadListeners.delete(listener);
  }

  start(): void {
    this.timer = setInterval(() => void this.poll(), this.pollMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /**
   * Reload if the store changed; a failing store keeps the last loaded
   * directory. A call while a poll runs (a change notice arriving as the
   * timer's poll reads the revision) looks again right after it, so a change
   * announced meanwhile is never left for the next tick.
   */
  async poll(): Promise<void> {
    if (this.polling) {
      this.again = true;
      return;
    }
    this.polling = true;
    try {
      do {
        this.again = false;
        if ((await this.store.accounts.revision()) !== this.revision) await this.load();
      } while (this.again);
    } catch (error) {
      this.onError(error);
    } finally {
      this.polling = false;
    }
  }

  private accessFor(account: Account, shared: Interner): AccountAccess {
    const base = this.plans.get(account.plan) ?? unknownPlan(account.plan);
    const plan = applyOverrides(base, account.overrides);
    const selected = account.references && account.references.length > 0 ? account.references : null;
    return {
      id: account.id,
      username: account.username,
      active: account.status === 'active',
      plan,
      services: shared.get(`s:${plan.services.join(',')}`, () => new Set(plan.services)),
      allowance: shared.get(`a:${plan.max_references}:${selected ? selected.join(',') : account.overrides?.default_references ? plan.default_references.join(',') : `default:${plan.name}`}`, () =>
        allowanceFor(plan, selected, this.catalogue),
      ),
      origins: account.origins && account.origins.length > 0 ? new Set(account.origins) : null,
      limits: shared.get(`l:${plan.requests_per_minute}:${plan.requests_per_day}`, () => ({ perMinute: plan.requests_per_minute, perDay: plan.requests_per_day })),
    };
  }
}

/**
 * Accounts on the same plan share one allowance set, one services set and one
 * limits object instead of a copy each: with 10,000 accounts that is most of
 * the directory's memory. Shared values are never mutated.
 */
class Interner {
  private readonly values = new Map<string, unknown>();

  /**
   * `previous`: the last load's values, taken over where an id is asked for
   * again. An id spells out every input of its value (plans are fixed while
   * the process runs), so a reload that changed nothing for an account hands
   * it the same objects: streams grouped by allowance and caches keyed by it
   * carry on, and only ids still in use are kept.
   */
  constructor(private readonly previous: Interner | null = null) {}

  get<T>(id: string, make: () => T): T {
    if (!this.values.has(id)) this.values.set(id, this.previous?.values.has(id) ? this.previous.values.get(id) : make());
    return this.values.get(id) as T;
  }
}

/**
 * The references an account may read: its selection (cut to the plan's limit)
 * or the plan's defaults; null when the plan sets no limit and nothing was selected.
 */
export function allowanceFor(plan: Plan, selected: string[] | null, catalogue: Catalogue): ReadonlySet<string> | null {
  const canonical = (names: readonly string[]) => names.map((name) => catalogue.lookup(name)?.key).filter((key): key is string => key !== undefined);
  if (selected && selected.length > 0) {
    const keys = [...new Set(canonical(selected))];
    return new Set(plan.max_references === null ? keys : keys.slice(0, plan.max_references));
  }
  if (plan.max_references === null) return null;
  return new Set(canonical(plan.default_references).slice(0, plan.max_references));
}

/** An account whose plan vanished from the config keeps working for nothing rather than failing loads. */
function unknownPlan(name: string): Plan {
  return { name, services: [], max_references: 0, default_references: [], refresh_interval_seconds: 60, requests_per_minute: 1, requests_per_day: 1, history_days: 0, max_streams: 0, max_stream_seconds: 1, max_webhooks: 0 };
}

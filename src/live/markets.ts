import { holidaysOf as libraryHolidays } from '../catalogue/holidays.js';
import { MarketCalendar, type ClosureReason, type DayOverride, type MarketRules, type MarketState } from '../domain/market-calendar.js';
import { marketRules, type MarketSpec } from '../domain/market-specs.js';
import type { MarketField } from '../domain/rate.js';

/** An operator's declaration as the store keeps it (store/market-calendar-repository.ts). */
export interface DeclaredDay {
  market: string;
  day: string;
  action: 'close' | 'open';
  reason: string | null;
}

/** Every market's field at one instant, and until when they hold. */
export interface MarketFields {
  readonly byName: ReadonlyMap<string, MarketField>;
  /** The calendar version they were worked out from. */
  readonly version: number;
  readonly from: number;
  /** The next instant any market's state can change (epoch ms). */
  readonly until: number;
}

/**
 * The markets of this process (config `markets`): each one's calendar with
 * the operators' declarations applied, and which market each reference
 * trades in. Every node keeps its own, refreshed from the store
 * (live/calendar-sync.ts). The fields rates carry are worked out once per
 * state: a market changes state only at known instants, so `fields(now)`
 * answers from what it worked out until the earliest of them.
 */
export class Markets {
  readonly names: readonly string[];
  private readonly rules = new Map<string, MarketRules>();
  private calendars = new Map<string, MarketCalendar>();
  private version = 0;
  private cached: MarketFields | null = null;
  private readonly listeners = new Set<() => void>();

  constructor(
    specs: readonly MarketSpec[],
    /** Each reference's market by canonical key; null or absent: always open. */
    private readonly marketOfKey: ReadonlyMap<string, string | null>,
    holidaysOf: (country: string) => (year: number) => ReadonlyMap<string, ClosureReason> = libraryHolidays,
  ) {
    for (const spec of specs) {
      const rules = marketRules(spec, holidaysOf);
      this.rules.set(spec.name, rules);
      this.calendars.set(spec.name, new MarketCalendar(rules));
    }
    this.names = specs.map((spec) => spec.name);
  }

  /** A reference's market name (canonical key), or null for one no market takes. */
  marketOf(key: string): string | null {
    return this.marketOfKey.get(key) ?? null;
  }

  calendar(name: string): MarketCalendar | undefined {
    return this.calendars.get(name);
  }

  /** The calendar a reference's age is counted by; undefined when it has none (always open). */
  calendarOf(key: string): MarketCalendar | undefined {
    const name = this.marketOfKey.get(key);
    return name ? this.calendars.get(name) : undefined;
  }

  /** Moves with every change of the operators' declarations. */
  get revision(): number {
    return this.version;
  }

  /** Take the operators' declarations (all of them, as the store holds them now); listeners hear of it. */
  apply(declared: readonly DeclaredDay[]): void {
    const byMarket = new Map<string, Map<string, DayOverride>>();
    for (const entry of declared) {
      if (!this.rules.has(entry.market)) continue;
      let days = byMarket.get(entry.market);
      if (!days) byMarket.set(entry.market, (days = new Map()));
      days.set(entry.day, { action: entry.action, reason: entry.reason });
    }
    const calendars = new Map<string, MarketCalendar>();
    for (const [name, rules] of this.rules) calendars.set(name, new MarketCalendar(rules, byMarket.get(name) ?? new Map()));
    this.calendars = calendars;
    this.version++;
    for (const listener of this.listeners) listener();
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Each market as it stands at `now`; the same objects while nothing about them changed. */
  fields(now: number): MarketFields {
    const cached = this.cached;
    if (cached && cached.version === this.version && now >= cached.from && now < cached.until) return cached;
    const byName = new Map<string, MarketField>();
    let until = Infinity;
    for (const [name, calendar] of this.calendars) {
      const state = calendar.stateAt(now);
      until = Math.min(until, state.until);
      const field = fieldOf(state);
      const before = cached?.byName.get(name);
      byName.set(name, before && sameField(before, field) ? before : field);
    }
    return (this.cached = { byName, version: this.version, from: now, until });
  }

  /** A reference's market at any moment (`?at=`), worked out afresh, leaving the fields of the present alone; undefined for a reference no market takes. */
  fieldAt(key: string, ms: number): MarketField | undefined {
    const calendar = this.calendarOf(key);
    return calendar ? fieldOf(calendar.stateAt(ms)) : undefined;
  }

  /** Each market's state at `now`, in config order (the status page). */
  states(now: number): MarketState[] {
    return [...this.calendars.values()].map((calendar) => calendar.stateAt(now));
  }
}

export function fieldOf(state: MarketState): MarketField {
  return Object.freeze({
    name: state.name,
    state: state.state,
    reason: state.reason?.en ?? null,
    reason_fa: state.reason?.fa ?? null,
    opens_at: state.opensAt === null || !Number.isFinite(state.opensAt) ? null : state.opensAt,
  });
}

export function sameField(a: MarketField, b: MarketField): boolean {
  return a.name === b.name && a.state === b.state && a.reason === b.reason && a.reason_fa === b.reason_fa && a.opens_at === b.opens_at;
}

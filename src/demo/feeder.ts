import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Catalogue } from '../catalogue/catalogue.js';
import { PACKAGE_ROOT } from '../config.js';
import { systemClock, type Clock } from '../domain/clock.js';
import type { SourceConfig } from '../sources/monitor.js';

export const LEVELS_FILE = join(PACKAGE_ROOT, 'data', 'demo', 'levels.json');
/** Source keys whose price is set by decree (Iranian fuel): the demo writes them unchanged. */
const FIXED_FILE = join(PACKAGE_ROOT, 'data', 'demo', 'fixed.json');
const TICK_MS = 2000;

type Incident = { source: number; kind: 'lag' | 'break'; until: number };

/** One demo item: its realistic level, whether it may move, and its price currency when the catalogue says. */
interface Item {
  key: string;
  level: number;
  fixed: boolean;
  currency: string | undefined;
}

/**
 * Keeps the demo sources moving: a mean-reverting random walk around a
 * realistic level for every catalogue item, written by three sources with
 * small disagreements between them. Fixed-price items never move and every
 * source agrees on them. Now and then one source lags (stops writing past
 * its max age) or breaks (writes a corrupt file) for a while, so failover
 * shows on the status page.
 */
export class DemoFeeder {
  private readonly items: Item[];
  private readonly prices = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private incident: Incident | null = null;
  private nextIncidentAt: number;

  /** `catalogue` tells each item's currency, so rial prices are written as whole rials. */
  constructor(
    private readonly sources: SourceConfig[],
    private readonly random: () => number = Math.random,
    private readonly log: (line: string) => void = () => {},
    catalogue?: Catalogue,
    /** The service's clock, so a server whose clock is shifted (tests) reads documents of its own time. */
    private readonly clock: Clock = systemClock,
  ) {
    const levels = JSON.parse(readFileSync(LEVELS_FILE, 'utf8')) as Record<string, number>;
    const fixed = new Set(JSON.parse(readFileSync(FIXED_FILE, 'utf8')) as string[]);
    for (const key of fixed) {
      if (levels[key] === undefined) throw new Error(`${FIXED_FILE}: "${key}" has no level in ${LEVELS_FILE}`);
    }
    const currencies = new Map(catalogue?.references.map((reference) => [reference.source_key, reference.currency]));
    this.items = Object.entries(levels).map(([key, level]) => ({ key, level, fixed: fixed.has(key), currency: currencies.get(key) }));
    for (const item of this.items) this.prices.set(item.key, item.level);
    this.nextIncidentAt = this.clock.now() + 45_000 + this.random() * 45_000;
  }

  /** Write every source once, synchronously, so a server starting now finds data. */
  writeAll(now = this.clock.now()): void {
    this.step();
    this.sources.forEach((source, index) => {
      if (this.incident?.source === index && this.incident.kind === 'lag') return;
      if (this.incident?.source === index && this.incident.kind === 'break') {
        writeAtomically(source.path!, '{"updated_at": "corrupt ');
        return;
      }
      writeAtomically(source.path!, this.document(index, now));
    });
  }

  start(): void {
    this.writeAll();
    this.timer = setInterval(() => {
      const now = this.clock.now();
      this.planIncidents(now);
      this.writeAll(now);
    }, TICK_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private planIncidents(now: number): void {
    if (this.incident && now >= this.incident.until) {
      this.log(`demo: ${this.sources[this.incident.source]!.name} recovered`);
      this.incident = null;
      this.nextIncidentAt = now + 60_000 + this.random() * 60_000;
    }
    if (!this.incident && now >= this.nextIncidentAt && this.sources.length > 1) {
      // The last source never fails, so some source always has every item.
      const source = Math.floor(this.random() * (this.sources.length - 1));
      const kind = this.random() < 0.5 ? 'lag' : 'break';
      const maxAge = this.sources[source]!.max_age_seconds * 1000;
      this.incident = { source, kind, until: now + (kind === 'lag' ? maxAge + 15_000 : 20_000) };
      this.log(`demo: ${this.sources[source]!.name} ${kind === 'lag' ? 'lags' : 'breaks'} for a while`);
    }
  }

  /** One step of the walk: small moves, pulled back towards the level; fixed prices stay put. */
  private step(): void {
    for (const { key, level, fixed } of this.items) {
      if (fixed) continue;
      const price = this.prices.get(key)!;
      const pull = 0.05 * (level - price);
      const shock = price * 0.0008 * gaussian(this.random);
      this.prices.set(key, Math.max(level * 0.5, price + pull + shock));
    }
  }

  private document(sourceIndex: number, now: number): string {
    const items: Record<string, number> = {};
    this.items.forEach((item, itemIndex) => {
      // The third source covers four items in five, so per-key failover has something to do.
      if (sourceIndex === 2 && itemIndex % 5 === 4) return;
      if (item.fixed) {
        items[item.key] = item.level;
        return;
      }
      const bias = 1 + (sourceIndex === 0 ? 0 : sourceIndex === 1 ? 0.0007 : -0.0005) * (((itemIndex * 7) % 5) - 2);
      items[item.key] = roundLike(this.prices.get(item.key)! * bias, item.level, item.currency);
    });
    return JSON.stringify({ updated_at: new Date(now).toISOString(), items });
  }
}

/**
 * Rial prices as whole rials (to the ten above a million, as Tehran quotes
 * them), however small; others to a sensible number of decimals for their
 * size. Without a known currency the level alone decides.
 */
export function roundLike(value: number, level: number, currency?: string): number {
  if (currency === 'IRR') return level >= 1_000_000 ? Math.round(value / 10) * 10 : Math.round(value);
  if (level >= 10_000) return Math.round(value);
  if (level >= 100) return Number(value.toFixed(2));
  if (level >= 1) return Number(value.toFixed(4));
  return Number(value.toPrecision(5));
}

export function gaussian(random: () => number): number {
  const u = 1 - random();
  const v = random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

function writeAtomically(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, text);
  renameSync(temporary, path);
}

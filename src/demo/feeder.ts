import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PACKAGE_ROOT } from '../config.js';
import type { SourceConfig } from '../sources/monitor.js';

export const LEVELS_FILE = join(PACKAGE_ROOT, 'data', 'demo', 'levels.json');
const TICK_MS = 2000;

type Incident = { source: number; kind: 'lag' | 'break'; until: number };

/**
 * Keeps the demo sources moving: a mean-reverting random walk around a
 * realistic level for every catalogue item, written by three sources with
 * small disagreements between them. Now and then one source lags (stops
 * writing past its max age) or breaks (writes a corrupt file) for a while,
 * so failover shows on the status page.
 */
export class DemoFeeder {
  private readonly levels: [string, number][];
  private readonly prices = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private incident: Incident | null = null;
  private nextIncidentAt: number;

  constructor(
    private readonly sources: SourceConfig[],
    private readonly random: () => number = Math.random,
    private readonly log: (line: string) => void = () => {},
  ) {
    this.levels = Object.entries(JSON.parse(readFileSync(LEVELS_FILE, 'utf8')) as Record<string, number>);
    for (const [key, level] of this.levels) this.prices.set(key, level);
    this.nextIncidentAt = Date.now() + 45_000 + this.random() * 45_000;
  }

  /** Write every source once, synchronously, so a server starting now finds data. */
  writeAll(now = Date.now()): void {
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
      const now = Date.now();
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

  /** One step of the walk: small moves, pulled back towards the level. */
  private step(): void {
    for (const [key, level] of this.levels) {
      const price = this.prices.get(key)!;
      const pull = 0.05 * (level - price);
      const shock = price * 0.0008 * gaussian(this.random);
      this.prices.set(key, Math.max(level * 0.5, price + pull + shock));
    }
  }

  private document(sourceIndex: number, now: number): string {
    const items: Record<string, number> = {};
    this.levels.forEach(([key, level], itemIndex) => {
      // The third source covers four items in five, so per-key failover has something to do.
      if (sourceIndex === 2 && itemIndex % 5 === 4) return;
      const bias = 1 + (sourceIndex === 0 ? 0 : sourceIndex === 1 ? 0.0007 : -0.0005) * (((itemIndex * 7) % 5) - 2);
      items[key] = roundLike(this.prices.get(key)! * bias, level);
    });
    return JSON.stringify({ updated_at: new Date(now).toISOString(), items });
  }
}

/** Rial prices as whole numbers (to the ten above a million), others to a sensible number of decimals. */
export function roundLike(value: number, level: number): number {
  if (level >= 1_000_000) return Math.round(value / 10) * 10;
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

/** One caller's recent cost and requests (decayed alike), and whether its requests are being shed. */
interface Cost {
  ms: number;
  requests: number;
  shed: boolean;
}

/** Costs this small (after decay) belong to callers gone quiet: their entries are dropped so the map stays small. */
const FORGOTTEN_MS = 0.01;

/**
 * What each caller (an account, or `''` for requests without a key) has
 * recently cost the process, in milliseconds of request handling, decayed
 * exponentially by the load sampler. Charging a request is one map lookup and
 * one addition; an entry is allocated only for a caller's first request since
 * it went quiet. The map is bounded: past `maxCallers` a new caller goes
 * uncharged (and so is never shed) until a decay frees room.
 */
export class CostAccount {
  private readonly costs = new Map<string, Cost>();
  private shedCount = 0;

  constructor(private readonly maxCallers = 10_000) {}

  charge(caller: string, ms: number): void {
    const cost = this.costs.get(caller);
    if (cost !== undefined) {
      cost.ms += ms;
      cost.requests++;
    } else if (this.costs.size < this.maxCallers) {
      this.costs.set(caller, { ms, requests: 1, shed: false });
    }
  }

  /** Whether this caller's requests are refused while the process sheds load. */
  isShed(caller: string): boolean {
    return this.shedCount !== 0 && this.costs.get(caller)?.shed === true;
  }

  costOf(caller: string): number {
    return this.costs.get(caller)?.ms ?? 0;
  }

  /** Age every cost by `factor` (0..1); callers gone quiet are forgotten (a shed one is kept until released). */
  decay(factor: number): void {
    for (const [caller, cost] of this.costs) {
      cost.ms *= factor;
      cost.requests *= factor;
      if (cost.ms < FORGOTTEN_MS && !cost.shed) this.costs.delete(caller);
    }
  }

  /**
   * Mark the costliest callers as shed, and return them. On the first call of
   * an overload: the fewest callers, costliest first, that together cost at
   * least half of everything, taking only callers above the mean (the fair
   * share), or else the single costliest. On later calls (still overloaded
   * with those shed): the costliest caller not yet shed, when above the mean.
   */
  shedCostliest(): string[] {
    let total = 0;
    for (const cost of this.costs.values()) total += cost.ms;
    if (total === 0) return [];
    const mean = total / this.costs.size;
    const ranked = [...this.costs].filter(([, cost]) => !cost.shed).sort((a, b) => b[1].ms - a[1].ms);
    const chosen: string[] = [];
    if (this.shedCount === 0) {
      let covered = 0;
      for (const [caller, cost] of ranked) {
        if (covered >= total / 2 || (chosen.length > 0 && cost.ms <= mean)) break;
        chosen.push(caller);
        covered += cost.ms;
      }
    } else if (ranked.length > 0 && ranked[0]![1].ms > mean) {
      chosen.push(ranked[0]![0]);
    }
    for (const caller of chosen) this.costs.get(caller)!.shed = true;
    this.shedCount += chosen.length;
    return chosen;
  }

  /**
   * A saturated loop that still answers promptly: connections are served in
   * turn, so a caller whose requests each cost many times more than the
   * others' takes the loop from them. The one caller costing at least half of
   * everything is marked shed when its requests cost on average at least
   * `costlierBy` times the others' and the others together still cost at
   * least `othersShare` of it (someone is being crowded out: a lone busy
   * caller beside the probes is served at full speed, and so are callers of
   * alike requests, however many each sends). A marked caller is served again
   * once its share falls below a quarter, so the decision is re-made as costs
   * decay rather than held for the whole overload. Returns the callers newly marked.
   */
  shedDominant(othersShare: number, costlierBy: number): string[] {
    let total = 0;
    let requests = 0;
    for (const cost of this.costs.values()) {
      total += cost.ms;
      requests += cost.requests;
    }
    if (total === 0) return [];
    const chosen: string[] = [];
    for (const [caller, cost] of this.costs) {
      const share = cost.ms / total;
      if (cost.shed) {
        if (share < 0.25) {
          cost.shed = false;
          this.shedCount--;
        }
        continue;
      }
      const others = total - cost.ms;
      if (share < 0.5 || others < othersShare * total) continue;
      if (cost.ms / cost.requests < (costlierBy * others) / Math.max(requests - cost.requests, 1e-9)) continue;
      cost.shed = true;
      this.shedCount++;
      chosen.push(caller);
    }
    return chosen;
  }

  /** The overload is over: every caller is served again. */
  release(): void {
    for (const cost of this.costs.values()) cost.shed = false;
    this.shedCount = 0;
  }

  /** Callers currently shed, for the log line and tests. */
  shed(): string[] {
    return [...this.costs].filter(([, cost]) => cost.shed).map(([caller]) => caller);
  }
}

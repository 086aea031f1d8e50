export const SERVICES = ['catalogue', 'detail', 'status', 'webservice', 'usage', 'history', 'stream', 'alerts'] as const;
export type Service = (typeof SERVICES)[number];

/** What an account may use and how often. Plans are data: defaults below, merged with config. */
export interface Plan {
  name: string;
  services: Service[];
  /** null: unlimited. */
  max_references: number | null;
  /** The references an account gets when it selected none. */
  default_references: string[];
  /** 0: live. */
  refresh_interval_seconds: number;
  requests_per_minute: number;
  /** null: unlimited. */
  requests_per_day: number | null;
  /** How many days back history (`from`, `at`) reaches; 0: today only; null: unlimited. */
  history_days: number | null;
  /** Concurrent push streams per account (service `stream`). */
  max_streams: number;
  /** The longest a push stream stays open; then it ends and the client reconnects (its access checked afresh). */
  max_stream_seconds: number;
  /** Webhook endpoints the account may register (service `alerts`); 0: none. */
  max_webhooks: number;
}

/** One day: long enough to cost a client one reconnect a day, short enough that no connection is forever. */
export const DEFAULT_MAX_STREAM_SECONDS = 86_400;

/** Any plan number may be overridden for one account. */
export type PlanOverrides = Partial<Omit<Plan, 'name'>>;

export const DEFAULT_PLANS: Record<string, Omit<Plan, 'default_references'> & { default_reference_count: number | null }> = {
  basic: {
    name: 'basic',
    services: ['catalogue', 'detail', 'usage'],
    max_references: 50,
    default_reference_count: 50,
    refresh_interval_seconds: 60,
    requests_per_minute: 60,
    requests_per_day: 10_000,
    history_days: 0,
    max_streams: 0,
    max_stream_seconds: DEFAULT_MAX_STREAM_SECONDS,
    max_webhooks: 0,
  },
  pro: {
    name: 'pro',
    services: ['catalogue', 'detail', 'usage', 'status', 'webservice', 'history', 'stream', 'alerts'],
    max_references: 150,
    default_reference_count: 150,
    refresh_interval_seconds: 10,
    requests_per_minute: 600,
    requests_per_day: 200_000,
    history_days: 365,
    max_streams: 5,
    max_stream_seconds: DEFAULT_MAX_STREAM_SECONDS,
    max_webhooks: 5,
  },
  enterprise: {
    name: 'enterprise',
    services: [...SERVICES],
    max_references: null,
    default_reference_count: null,
    refresh_interval_seconds: 1,
    requests_per_minute: 6_000,
    requests_per_day: null,
    history_days: null,
    max_streams: 100,
    max_stream_seconds: DEFAULT_MAX_STREAM_SECONDS,
    max_webhooks: 50,
  },
};

/**
 * The default plans with their default references taken from the catalogue's
 * popularity order, then each configured plan merged over its default (or added).
 * A plan the defaults do not have starts from basic, but refreshes as often as
 * pro (every 10 s) unless it says otherwise: an operator trying a new plan sees
 * the first prices, and a price set by hand, within seconds rather than a
 * minute. A service it lists that its starting plan lacks gets pro's
 * allowance for it (history_days, max_streams, max_webhooks) unless the config
 * gives one, so `"services": ["detail", "stream"]` alone is a plan that can
 * open streams.
 */
export function buildPlans(popular: readonly string[], configured: Record<string, Partial<Omit<Plan, 'name'>>> = {}): Map<string, Plan> {
  const plans = new Map<string, Plan>();
  for (const [name, { default_reference_count, ...plan }] of Object.entries(DEFAULT_PLANS)) {
    const count = default_reference_count ?? popular.length;
    plans.set(name, { ...plan, services: [...plan.services], default_references: popular.slice(0, count) });
  }
  const newPlan: Plan = { ...plans.get('basic')!, refresh_interval_seconds: DEFAULT_PLANS.pro!.refresh_interval_seconds };
  for (const [name, overrides] of Object.entries(configured)) {
    const start = plans.get(name) ?? newPlan;
    const merged: Plan = withServiceAllowances({ ...start, ...overrides, name }, start, overrides);
    if (overrides.max_references !== undefined && overrides.default_references === undefined && merged.max_references !== null) {
      merged.default_references = popular.slice(0, merged.max_references);
    }
    plans.set(name, merged);
  }
  return plans;
}

/** A plan with one account's overrides applied (services it adds get their allowance as in `buildPlans`). */
export function applyOverrides(plan: Plan, overrides: PlanOverrides | null): Plan {
  if (!overrides || Object.keys(overrides).length === 0) return plan;
  return withServiceAllowances({ ...plan, ...overrides, name: plan.name }, plan, overrides);
}

/** `merged` with pro's allowance for each sized service it lists that `start` did not, where `given` sets none. */
function withServiceAllowances(merged: Plan, start: Plan, given: PlanOverrides): Plan {
  const pro = DEFAULT_PLANS.pro!;
  const added = (service: Service) => merged.services.includes(service) && !start.services.includes(service);
  if (added('history') && given.history_days === undefined) merged.history_days = pro.history_days;
  if (added('stream') && given.max_streams === undefined) merged.max_streams = pro.max_streams;
  if (added('alerts') && given.max_webhooks === undefined) merged.max_webhooks = pro.max_webhooks;
  return merged;
}

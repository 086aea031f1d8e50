import type { Catalogue } from '../catalogue/catalogue.js';
import { ApiError } from '../domain/errors.js';
import { RIAL_CURRENCY, TOMAN_CURRENCY, type RateUnit } from '../domain/units.js';
import { preparedIn } from '../live/prepare.js';
import type { Snapshot } from '../live/snapshot.js';
import { resolveOne } from './keys.js';

/**
 * One side of a conversion, or the price a jewellery invoice starts from:
 * its price in `currency` (number text, exact), and the rate it came from as
 * the detail endpoint serialises it in the unit asked for (none for IRR and
 * IRT, which are priced by definition).
 */
export interface PricedSide {
  /** The canonical reference key, or `IRR` / `IRT`. */
  name: string;
  price: string;
  currency: string;
  rateJson: string | null;
}

/** IRR is worth 1 rial; IRT (toman) 10. */
const CURRENCY_SIDES: Readonly<Record<string, string>> = { [RIAL_CURRENCY]: '1', [TOMAN_CURRENCY]: '10' };

/** The currency an index is "priced" in: it buys nothing, so nothing converts to or from it. */
const NO_CURRENCY = 'XXX';

/** What a name stands for, before any price is looked at: a reference (its key) or IRR / IRT. */
export interface ResolvedSide {
  name: string;
  currency: string;
  /** The fixed price of IRR and IRT; null for a reference, priced from the snapshot. */
  fixed: string | null;
}

/**
 * Resolve `name` (a key or alias, `IRR` or `IRT`): unknown → 404 RATE_NOT_FOUND, outside the
 * plan → 403 REFERENCE_NOT_IN_PLAN, an index → 400 naming `param`. Needs no price, so the checks
 * of a request's parameters all come before the 503 of a price missing now.
 */
export function resolveSide(param: string, name: string, catalogue: Catalogue, allowance: ReadonlySet<string> | null): ResolvedSide {
  const code = name.toUpperCase();
  const fixed = CURRENCY_SIDES[code];
  if (fixed !== undefined) return { name: code, currency: RIAL_CURRENCY, fixed };
  const reference = resolveOne(catalogue, name, allowance);
  if (reference.currency === NO_CURRENCY) {
    throw new ApiError('INVALID_PARAMETER', `Query parameter ${JSON.stringify(param)}: ${reference.key} is an index, which has no price in any currency to convert.`);
  }
  return { name: reference.key, currency: reference.currency, fixed: null };
}

/**
 * The price of a resolved side in the snapshot the caller sees: no value now → 503
 * SERVICE_UNAVAILABLE. A stale value is used, and says so in its rate's `status`, as the detail
 * endpoint serves it.
 */
export function priceSide(side: ResolvedSide, snapshot: Snapshot, unit: RateUnit): PricedSide {
  if (side.fixed !== null) return { name: side.name, price: side.fixed, currency: side.currency, rateJson: null };
  const prepared = snapshot.rates.get(side.name);
  const value = prepared?.rate.value ?? null;
  if (prepared === undefined || value === null) throw new ApiError('SERVICE_UNAVAILABLE', `No price of ${side.name} is available now; retry shortly.`);
  return { name: side.name, price: value, currency: side.currency, rateJson: preparedIn(prepared, unit).json };
}

/** Both steps at once, for one side (the jewellery invoice's gram price). */
export function pricedSide(param: string, name: string, catalogue: Catalogue, snapshot: Snapshot, allowance: ReadonlySet<string> | null, unit: RateUnit): PricedSide {
  return priceSide(resolveSide(param, name, catalogue, allowance), snapshot, unit);
}

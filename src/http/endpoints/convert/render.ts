import { convertAmount } from '../../../domain/convert.js';
import { ApiError } from '../../../domain/errors.js';
import { etagOf, fnv1a } from '../../../domain/hash.js';
import { okHead } from '../../../render/envelope.js';
import type { PricedSide, ResolvedSide } from '../../../render/priced-side.js';

/**
 * The convert answer (docs/api.md#convert): `amount` of `from` in units of
 * `to`, both priced in one currency, and the rates it used. Built per
 * request: a handful of decimal operations and string joins.
 */
export function renderConvert(from: PricedSide, to: PricedSide, amount: string, generatedAt: string): { body: string; etag: string } {
  const result = convertAmount(amount, from.price, to.price);
  const rates = [from, to].filter((side, index) => side.rateJson !== null && (index === 0 || side.name !== from.name));
  const tail =
    `,"from":${JSON.stringify(from.name)},"to":${JSON.stringify(to.name)},"amount":${amount},"result":${result}` + `,"rates":[${rates.map((side) => side.rateJson).join(',')}]}`;
  return { body: okHead(generatedAt) + tail, etag: etagOf('v', fnv1a(tail)) };
}

/** Both sides must price in one currency (IRR and IRT count as one): a parameter error, found before any price is looked at. */
export function assertOneCurrency(from: ResolvedSide, to: ResolvedSide): void {
  if (from.currency === to.currency) return;
  throw new ApiError(
    'INVALID_PARAMETER',
    `Query parameters "from" and "to" must price in one currency: ${from.name} is priced in ${from.currency}, ${to.name} in ${to.currency}.`,
  );
}

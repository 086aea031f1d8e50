import { etagOf, fnv1a } from '../../../domain/hash.js';
import { jewelleryPrice, type Karat } from '../../../domain/jewellery.js';
import { RIAL_CURRENCY, rialToToman, TOMAN_CURRENCY, type RateUnit } from '../../../domain/units.js';
import { okHead } from '../../../render/envelope.js';
import type { PricedSide } from '../../../render/priced-side.js';

/** The reference whose value is the gram price of each karat (each quoted by the market itself; docs/api.md#jewellery). */
export const KARAT_REFERENCES: Readonly<Record<Karat, string>> = { '18': 'gold_18k', '21': 'gold_21k', '22': 'gold_22k', '24': 'gold_24k' };

export interface JewelleryQuery {
  weight: string;
  karat: Karat;
  makingPercent: string;
  profitPercent: string;
  vatPercent: string;
  unit: RateUnit;
}

/**
 * The jewellery answer (docs/api.md#jewellery): the invoice's lines in rial,
 * or in toman when asked (computed from the toman gram price, so the total
 * is rounded to a whole toman), and the gram price's rate.
 */
export function renderJewellery(query: JewelleryQuery, gram: PricedSide, generatedAt: string): { body: string; etag: string } {
  const toman = query.unit === 'toman' && gram.currency === RIAL_CURRENCY;
  const gramPrice = toman ? rialToToman(gram.price) : gram.price;
  const price = jewelleryPrice({ weight: query.weight, gramPrice, makingPercent: query.makingPercent, profitPercent: query.profitPercent, vatPercent: query.vatPercent });
  const tail =
    `,"weight":${query.weight},"karat":${query.karat},"making_percent":${query.makingPercent},"profit_percent":${query.profitPercent},"vat_percent":${query.vatPercent}` +
    `,"currency":${JSON.stringify(toman ? TOMAN_CURRENCY : gram.currency)},"gram_price":${gramPrice}` +
    `,"gold":${price.gold},"making":${price.making},"profit":${price.profit},"vat":${price.vat},"total":${price.total}` +
    `,"rates":[${gram.rateJson}]}`;
  return { body: okHead(generatedAt) + tail, etag: etagOf('j', fnv1a(tail)) };
}

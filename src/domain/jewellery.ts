import Big from 'big.js';

/** The karats the jewellery price is asked in, each with a gram price in the catalogue. */
export const KARATS = ['18', '21', '22', '24'] as const;
export type Karat = (typeof KARATS)[number];
export const DEFAULT_KARAT: Karat = '18';

/** The customary defaults of a Tehran shop's invoice (percent). */
export const DEFAULT_PROFIT_PERCENT = '7';
export const DEFAULT_VAT_PERCENT = '10';

/** The inputs of an invoice: decimal text, percents as written (`7` is 7 %). */
export interface JewelleryInput {
  weight: string;
  gramPrice: string;
  makingPercent: string;
  profitPercent: string;
  vatPercent: string;
}

/** Each line of the invoice exactly, and the total rounded half-up to a whole unit of the currency. */
export interface JewelleryPrice {
  gold: string;
  making: string;
  profit: string;
  vat: string;
  total: string;
}

const HUNDREDTH = new Big('0.01');

/**
 * The customary Iranian jewellery price: gold = weight × gram price,
 * making = gold × making%, profit = (gold + making) × profit%,
 * vat = (making + profit) × vat% (VAT is levied on the work and the shop's
 * profit, not on the gold), total = their sum. Every line is exact (big.js
 * multiplies and adds without rounding; a percent is × 0.01, never ÷ 100);
 * only the total is rounded, once, at the end.
 */
export function jewelleryPrice(input: JewelleryInput): JewelleryPrice {
  const gold = new Big(input.weight).times(input.gramPrice);
  const making = gold.times(percent(input.makingPercent));
  const profit = gold.plus(making).times(percent(input.profitPercent));
  const vat = making.plus(profit).times(percent(input.vatPercent));
  const total = gold.plus(making).plus(profit).plus(vat).round(0, Big.roundHalfUp);
  return { gold: gold.toFixed(), making: making.toFixed(), profit: profit.toFixed(), vat: vat.toFixed(), total: total.toFixed() };
}

function percent(text: string): Big {
  return new Big(text).times(HUNDREDTH);
}

import currencyCodes from 'currency-codes';
import { TOMAN_CURRENCY } from './units.js';

/**
 * The ISO 4217 codes, from `currency-codes` (which follows the list the ISO
 * publishes), including XXX (no currency: an index) and the metals' codes.
 * A catalogue price must be in one of these.
 */
export const ISO_CURRENCIES: readonly string[] = [...currencyCodes.codes()].sort();

/** What a served `currency` may be: an ISO code, or IRT for a rial price shown in toman (`?unit=toman`). */
export const CURRENCIES: readonly string[] = [...ISO_CURRENCIES, TOMAN_CURRENCY].sort();

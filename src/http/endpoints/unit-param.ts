import { RATE_UNITS, DEFAULT_RATE_UNIT } from '../../domain/units.js';

/** `?unit=` wherever prices are shown (docs/api.md#units-and-precision); absent: rial. */
export const UNIT = {
  type: 'enum',
  values: RATE_UNITS,
  fallback: DEFAULT_RATE_UNIT,
  description: 'rial (default): prices as the sources give them. toman: rial prices divided by 10 exactly, currency IRT, unit label تومان/…; other currencies unchanged',
} as const;

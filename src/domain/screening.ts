/**
 * Screening of fresh source values before one is served (docs/reliability.md#what-is-never-served): rules
 * on plain numbers, so the resolver stays pure and each rule is tested alone.
 * The numeric readings are only compared here; the served digits are the
 * source's own text.
 */
export interface Screening {
  /** An outlier lies further from the median than this many median absolute deviations… */
  outlierMads: number;
  /** …and further than this percentage of the median (so identical quotes do not make every tick an outlier). */
  outlierMinPercent: number;
  /** A single source's move from the last served value beyond this percentage is held; null: no jump rule. */
  maxJumpPercent: number | null;
  /** How long a held jump waits for a second source before it is served anyway. */
  confirmMs: number;
}

export const DEFAULT_SCREENING: Screening = { outlierMads: 5, outlierMinPercent: 2, maxJumpPercent: null, confirmMs: 60_000 };

/** The fewest fresh values among which one can be called an outlier. */
export const MIN_VALUES_FOR_OUTLIERS = 3;

/**
 * Indexes of the values further from their median than the tolerance:
 * max(outlierMads × MAD, outlierMinPercent % of the median). Fewer than three
 * values give no verdict: with two, neither can be told wrong.
 */
export function findOutliers(values: readonly number[], screening: Screening): number[] {
  if (values.length < MIN_VALUES_FOR_OUTLIERS) return [];
  const middle = median(values);
  const deviations = values.map((value) => Math.abs(value - middle));
  const tolerance = Math.max(screening.outlierMads * median(deviations), (Math.abs(middle) * screening.outlierMinPercent) / 100);
  const outliers: number[] = [];
  deviations.forEach((deviation, index) => {
    if (deviation > tolerance) outliers.push(index);
  });
  return outliers;
}

/** Whether `value` moved more than `percent` % away from `from`. */
export function isJump(value: number, from: number, percent: number): boolean {
  return Math.abs(value - from) > (Math.abs(from) * percent) / 100;
}

/** Whether two quotes agree within `percent` % (of the second): a second source confirming a jump. */
export function sameLevel(a: number, b: number, percent: number): boolean {
  return !isJump(a, b, percent);
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const half = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[half]! : (sorted[half - 1]! + sorted[half]!) / 2;
}

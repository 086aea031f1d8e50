import type { ScreenedOut } from '../domain/resolve.js';

/** Screening's verdicts in one snapshot: by reference key, then source name, what was rejected; references with none are absent. */
export type ScreeningVerdicts = ReadonlyMap<string, ReadonlyMap<string, ScreenedOut>>;

/** What screening did to one source's values in one snapshot; `newOutliers` were not outliers in the snapshot before. */
export interface ScreenCount {
  outliers: number;
  held: number;
  newOutliers: number;
}

/** Each source's count of the verdicts (sources with none are absent), new outliers measured against the verdicts before. */
export function countScreening(verdicts: ScreeningVerdicts, before: ScreeningVerdicts): Map<string, ScreenCount> {
  const counts = new Map<string, ScreenCount>();
  for (const [reference, bySource] of verdicts) {
    for (const [name, why] of bySource) {
      let count = counts.get(name);
      if (!count) counts.set(name, (count = { outliers: 0, held: 0, newOutliers: 0 }));
      if (why === 'held') {
        count.held++;
        continue;
      }
      count.outliers++;
      if (before.get(reference)?.get(name) !== 'outlier') count.newOutliers++;
    }
  }
  return counts;
}

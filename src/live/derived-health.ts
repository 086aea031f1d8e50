import { DERIVED_SOURCE, evaluateFormula, FormulaError, type DerivedReference } from '../domain/formula.js';
import { RIAL_CURRENCY } from '../domain/units.js';
import type { SourceHealth, SourceState } from '../sources/health.js';
import { NO_DROPS } from '../sources/drops.js';
import { NO_UNKNOWN_KEYS } from '../sources/unknown-keys.js';
import type { PreparedRate } from './snapshot.js';

/** How the `derived` source stands in one snapshot: what its formulas read and what they gave. */
export interface DerivedAssessment {
  state: SourceState;
  /** Formulas in the config. */
  references: number;
  /** Formulas that gave a value (every input had one, and the result is above zero). */
  computed: number;
  /** Input reference keys served stale, in config order. */
  staleInputs: string[];
  /** Input reference keys with no value at all. */
  missingInputs: string[];
  /** Each formula that gave no value, in config order, and why (`no value for usd_free`, `division by zero`). */
  withoutValue: { key: string; reason: string }[];
  /** The oldest input of the values it gave (epoch ms): its data's time; null when it gave none. */
  oldest: number | null;
}

/**
 * The `derived` source's state, from the rates a snapshot serves for the
 * references its formulas read (the same values the formulas were computed
 * from in that build). `active`: every formula gave a value from fresh
 * inputs. `degraded`: some input is stale or has no value (or a formula gave
 * none) while at least one value is computed. `down`: no formula gave a value.
 * Every node works it out from the snapshot it serves, so all of them agree,
 * and a node that ages its snapshot while no leader feeds it ages this too.
 */
export function assessDerived(derived: readonly DerivedReference[], rates: ReadonlyMap<string, PreparedRate>): DerivedAssessment {
  const stale = new Set<string>();
  const missing = new Set<string>();
  const withoutValue: DerivedAssessment['withoutValue'] = [];
  let computed = 0;
  let oldest: number | null = null;
  for (const reference of derived) {
    const values = new Map<string, string>();
    const lacking = new Set<string>();
    const staleHere = new Set<string>();
    let inputsOldest = Infinity;
    for (const [name, key] of reference.inputs) {
      const rate = rates.get(key)?.rate;
      if (!rate || rate.value === null || rate.updated_at === null) {
        missing.add(key);
        lacking.add(key);
        continue;
      }
      if (rate.status !== 'ok') {
        stale.add(key);
        staleHere.add(key);
      }
      values.set(name, rate.value);
      inputsOldest = Math.min(inputsOldest, rate.updated_at);
    }
    const refusal = lacking.size > 0 ? `no value for ${[...lacking].join(', ')}` : whyNoValue(reference, values, rates);
    if (refusal !== null) {
      const staleNote = staleHere.size > 0 ? `; ${[...staleHere].join(', ')} stale` : '';
      withoutValue.push({ key: reference.key, reason: refusal + staleNote });
      continue;
    }
    computed++;
    if (inputsOldest !== Infinity) oldest = oldest === null ? inputsOldest : Math.min(oldest, inputsOldest);
  }
  const state: SourceState = computed === 0 ? 'down' : computed < derived.length || stale.size > 0 || missing.size > 0 ? 'degraded' : 'active';
  return { state, references: derived.length, computed, staleInputs: [...stale], missingInputs: [...missing], withoutValue, oldest };
}

/** Why the formula gives no value from these inputs (a division by zero, a result not above zero, as the build decides, live/derived.ts); null when it gives one. */
function whyNoValue(reference: DerivedReference, values: ReadonlyMap<string, string>, rates: ReadonlyMap<string, PreparedRate>): string | null {
  const decimals = rates.get(reference.key)?.rate.currency === RIAL_CURRENCY ? 0 : 6;
  try {
    const raw = evaluateFormula(reference.formula, (name) => values.get(name)!, decimals);
    return raw.startsWith('-') || /^0(\.0+)?$/.test(raw) ? `result ${raw} is not above zero` : null;
  } catch (error) {
    if (error instanceof FormulaError) return error.message;
    throw error;
  }
}

/** Why the derived source is not active, in the words of the keyed /v1/status; null when it is. */
function derivedError(assessment: DerivedAssessment): string | null {
  const parts: string[] = [];
  if (assessment.staleInputs.length > 0) parts.push(`stale inputs: ${assessment.staleInputs.join(', ')}`);
  if (assessment.missingInputs.length > 0) parts.push(`inputs without a value: ${assessment.missingInputs.join(', ')}`);
  const idle = assessment.withoutValue;
  if (idle.length > 0) {
    const named = idle.map(({ key, reason }) => `${key} (${reason})`).join(', ');
    parts.push(`${idle.length} of ${assessment.references} ${assessment.references === 1 ? 'formula' : 'formulas'} without a value: ${named}`);
  }
  return parts.length > 0 ? parts.join('; ') : null;
}

/** The `derived` source as /v1/status, the status page and /metrics list it, at `now`. */
export function derivedHealth(assessment: DerivedAssessment, now: number): SourceHealth {
  const age = assessment.oldest === null ? null : Math.max(0, Math.floor((now - assessment.oldest) / 1000));
  return {
    name: DERIVED_SOURCE,
    type: 'derived',
    state: assessment.state,
    last_update: assessment.oldest,
    age_seconds: age,
    error: derivedError(assessment),
    last_check: null,
    dropped: 0,
    out_of_range: 0,
    outliers: 0,
    held: 0,
    outliers_total: 0,
    unknown_keys: NO_UNKNOWN_KEYS,
    format: 'formula',
    mapped: assessment.computed,
    dropped_reasons: NO_DROPS,
    derived: { references: assessment.references, computed: assessment.computed, stale_inputs: assessment.staleInputs, missing_inputs: assessment.missingInputs },
  };
}

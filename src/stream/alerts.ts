import { alertFields, AlertWatch, type AlertRule } from '../domain/alert-rule.js';
import type { Rate } from '../domain/rate.js';
import type { RateUnit } from '../domain/units.js';
import { preparedIn } from '../live/prepare.js';
import type { PreparedRate } from '../live/snapshot.js';

/**
 * One stream's `?alerts=` rules and their edge states (docs/api.md#stream-alerts).
 * Streams share their `snapshot` and `rates` frames per group, but alert state
 * is per stream: the hub asks this for the stream's alert frames each time it
 * brings the stream to a new state (its first snapshot, then each `rates`
 * event), so a rule is read against exactly what the stream has just been
 * sent, and only streams that have rules pay for it.
 */
export class StreamAlerts {
  private readonly watch: AlertWatch;
  /** Alert events sent so far. */
  sent = 0;

  constructor(
    rules: readonly AlertRule[],
    private readonly format: (ms: number) => string,
  ) {
    this.watch = new AlertWatch(rules);
  }

  get rules(): readonly AlertRule[] {
    return this.watch.rules;
  }

  /**
   * The `alert` events of the rules that became true in `rates` as the stream
   * reads them (its unit: a toman stream compares toman values), as one frame;
   * null when none did. A reference the stream does not read (`reads` says no,
   * as after a plan change) is not known to it: its rules neither fire nor re-arm.
   */
  frames(rates: ReadonlyMap<string, PreparedRate>, unit: RateUnit, reads: (key: string) => boolean): Buffer | null {
    const rateOf = (key: string): Rate | undefined => {
      if (!reads(key)) return undefined;
      const prepared = rates.get(key);
      return prepared && preparedIn(prepared, unit).rate;
    };
    const fired = this.watch.evaluate(rateOf);
    if (fired.length === 0) return null;
    // Rare (a rule just became true): the rate is looked up again rather than kept for every rule on every event.
    let text = '';
    for (const rule of fired) text += alertFrame(alertFields(rule, rateOf(rule.key)!, this.format));
    this.sent += fired.length;
    return Buffer.from(text);
  }
}

/** One `event: alert`. No `id:`: an alert is news, not a state to resume from, so Last-Event-ID stays the snapshot version. */
function alertFrame(fields: string): string {
  return `event: alert\ndata: {${fields}}\n\n`;
}

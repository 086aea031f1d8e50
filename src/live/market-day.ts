import { compareDecimal, percentOf, subtractDecimal } from '../domain/decimal.js';
import { NO_DAY_FIELDS, type DayFields } from '../domain/rate.js';

/** What the history store knows of a reference's latest market day, to carry it over a restart. */
export interface DaySeed {
  /** The calendar day (YYYY-MM-DD, configured zone) of the latest daily candle. */
  day: string;
  open: string;
  high: string;
  low: string;
  close: string;
  /** The last value before that day, when known. */
  prevClose: string | null;
}

interface DayState {
  day: string;
  open: string;
  high: string;
  low: string;
  last: string;
  prevClose: string | null;
  fields: DayFields;
}

/**
 * The market day of every reference, kept in memory: the day's open, high and
 * low, and the previous day's close. Fed with the served value at every
 * snapshot; at the first value of a new calendar day the last value of the
 * day before becomes the previous close and the day starts from the value
 * served then. Fields are recomputed only when the value or the day changes.
 */
export class MarketDays {
  private readonly states = new Map<string, DayState>();

  seed(key: string, seed: DaySeed): void {
    const state: DayState = { day: seed.day, open: seed.open, high: seed.high, low: seed.low, last: seed.close, prevClose: seed.prevClose, fields: NO_DAY_FIELDS };
    state.fields = fieldsOf(state);
    this.states.set(key, state);
  }

  /** The day fields of a reference serving `value` on `day` (YYYY-MM-DD), the day's range updated with it. */
  fieldsFor(key: string, value: string | null, day: string): DayFields {
    if (value === null) return NO_DAY_FIELDS;
    let state = this.states.get(key);
    if (!state) {
      state = { day, open: value, high: value, low: value, last: value, prevClose: null, fields: NO_DAY_FIELDS };
      state.fields = fieldsOf(state);
      this.states.set(key, state);
    } else if (state.day !== day) {
      state.prevClose = state.last;
      state.day = day;
      state.open = state.high = state.low = state.last = value;
      state.fields = fieldsOf(state);
    } else if (value !== state.last) {
      if (compareDecimal(value, state.high) > 0) state.high = value;
      if (compareDecimal(value, state.low) < 0) state.low = value;
      state.last = value;
      state.fields = fieldsOf(state);
    }
    return state.fields;
  }
}

function fieldsOf(state: DayState): DayFields {
  const { prevClose } = state;
  const change = prevClose === null ? null : subtractDecimal(state.last, prevClose);
  return {
    day_open: state.open,
    day_high: state.high,
    day_low: state.low,
    prev_close: prevClose,
    change,
    change_percent: change === null || compareDecimal(prevClose!, '0') === 0 ? null : percentOf(change, prevClose!),
  };
}

import { sql, type Kysely } from 'kysely';
import type { Database, MarketCalendarTable } from './tables.js';

/** The row of `store_revision` that counts changes to the market calendar (5: manual prices). */
export const MARKET_CALENDAR_REVISION = 6;

/** One declared day, times as numbers. */
export type CalendarEntry = MarketCalendarTable;

/** At most this many days one change may declare (a closure from..to), and one read returns. */
export const MAX_CALENDAR_DAYS = 366;
export const MAX_CALENDAR_ROWS = 10_000;

/**
 * Operators' closures and openings per market and local day. A change
 * writes its days and bumps the calendar revision in one transaction, so a
 * node that sees the revision move sees the whole change.
 */
export class MarketCalendarRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Declare `days` (YYYY-MM-DD) of `market` closed (with `reason`) or open; a day declared before is replaced. */
  async declare(market: string, days: readonly string[], action: 'close' | 'open', reason: string | null, now = Date.now()): Promise<void> {
    if (days.length === 0) return;
    await this.db.transaction().execute(async (trx) => {
      for (const day of days) {
        const row: MarketCalendarTable = { market, day, action, reason: action === 'close' ? reason : null, set_at: now };
        await trx
          .insertInto('market_calendar')
          .values(row)
          .onConflict((conflict) => conflict.columns(['market', 'day']).doUpdateSet({ action: row.action, reason: row.reason, set_at: row.set_at }))
          .execute();
      }
      await trx
        .updateTable('store_revision')
        .set({ revision: sql`revision + 1` })
        .where('id', '=', MARKET_CALENDAR_REVISION)
        .execute();
    });
  }

  /** The declarations, by market then day; filtered by market and an inclusive day range when given. */
  async list(filter: { market?: string; from?: string; to?: string } = {}): Promise<CalendarEntry[]> {
    let query = this.db.selectFrom('market_calendar').selectAll();
    if (filter.market !== undefined) query = query.where('market', '=', filter.market);
    if (filter.from !== undefined) query = query.where('day', '>=', filter.from);
    if (filter.to !== undefined) query = query.where('day', '<=', filter.to);
    const rows = await query.orderBy('market').orderBy('day').limit(MAX_CALENDAR_ROWS).execute();
    return rows.map((row) => ({ ...row, set_at: Number(row.set_at) }));
  }

  /** Moves with every change: every node polls it and rereads the declarations only when it moved. */
  async revision(): Promise<number> {
    const row = await this.db.selectFrom('store_revision').select('revision').where('id', '=', MARKET_CALENDAR_REVISION).executeTakeFirst();
    return Number(row?.revision ?? 0);
  }
}

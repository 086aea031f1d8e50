import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, ManualPriceLogTable, ManualPricesTable } from './tables.js';

/** The row of `store_revision` that counts changes to manual prices (1: accounts and keys, 2–3: history). */
export const MANUAL_PRICES_REVISION = 5;

/** A price an operator set on a manual source, as it stands now: a row of `manual_prices`, times as numbers. */
export type ManualPrice = ManualPricesTable;

/** One change, as the log keeps it: a `set` with its value and expiry, or a `clear` (value and expiry null). */
export type ManualPriceChange = Omit<ManualPriceLogTable, 'id'> & { id: number };

export interface ManualPriceSet {
  value: string;
  expiresAt: number | null;
  note: string | null;
}

/** How many log entries a read returns at most, unless asked for fewer. */
export const LOG_LIMIT = 1000;

/**
 * Manual prices and their change log. A set or a clear writes the price, its
 * log entry and the prices revision in one transaction, so a reader that sees
 * the revision move sees the change, and the log never misses one.
 */
export class ManualPriceRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async set(source: string, reference: string, price: ManualPriceSet, now = Date.now()): Promise<ManualPrice> {
    const row: ManualPricesTable = { source, reference, value: price.value, set_at: now, expires_at: price.expiresAt, note: price.note };
    await this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('manual_prices')
        .values(row)
        .onConflict((conflict) => conflict.columns(['source', 'reference']).doUpdateSet({ value: row.value, set_at: row.set_at, expires_at: row.expires_at, note: row.note }))
        .execute();
      await logChange(trx, { source, reference, action: 'set', value: row.value, expires_at: row.expires_at, note: row.note, at: now });
    });
    return row;
  }

  /** Remove the price; false (and nothing logged) when there was none. */
  async clear(source: string, reference: string, note: string | null = null, now = Date.now()): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const result = await trx.deleteFrom('manual_prices').where('source', '=', source).where('reference', '=', reference).executeTakeFirst();
      if (Number(result.numDeletedRows) === 0) return false;
      await logChange(trx, { source, reference, action: 'clear', value: null, expires_at: null, note, at: now });
      return true;
    });
  }

  /** The current prices, of one source or of all, by source then reference. */
  async current(source?: string): Promise<ManualPrice[]> {
    let query = this.db.selectFrom('manual_prices').selectAll();
    if (source !== undefined) query = query.where('source', '=', source);
    const rows = await query.orderBy('source').orderBy('reference').execute();
    return rows.map((row) => ({ ...row, set_at: Number(row.set_at), expires_at: row.expires_at === null ? null : Number(row.expires_at) }));
  }

  /** Changes, newest first; filtered by source and by reference (canonical key) when given. */
  async log(filter: { source?: string; reference?: string; limit?: number } = {}): Promise<ManualPriceChange[]> {
    let query = this.db.selectFrom('manual_price_log').selectAll();
    if (filter.source !== undefined) query = query.where('source', '=', filter.source);
    if (filter.reference !== undefined) query = query.where('reference', '=', filter.reference);
    const rows = await query
      .orderBy('id', 'desc')
      .limit(Math.min(filter.limit ?? LOG_LIMIT, LOG_LIMIT))
      .execute();
    return rows.map((row) => ({ ...row, id: Number(row.id), at: Number(row.at), expires_at: row.expires_at === null ? null : Number(row.expires_at) }));
  }

  /** When a source's prices last changed (epoch ms), or null when they never did. */
  async lastChange(source: string): Promise<number | null> {
    const row = await this.db.selectFrom('manual_price_log').select((eb) => eb.fn.max('at').as('at')).where('source', '=', source).executeTakeFirst();
    return row?.at === null || row?.at === undefined ? null : Number(row.at);
  }

  /** Moves with every set and clear: a reader polls it and rereads the prices only when it moved. */
  async revision(): Promise<number> {
    const row = await this.db.selectFrom('store_revision').select('revision').where('id', '=', MANUAL_PRICES_REVISION).executeTakeFirst();
    return Number(row?.revision ?? 0);
  }
}

async function logChange(trx: Transaction<Database>, change: Omit<ManualPriceLogTable, 'id'>): Promise<void> {
  await trx.insertInto('manual_price_log').values(change).execute();
  await trx
    .updateTable('store_revision')
    .set({ revision: sql`revision + 1` })
    .where('id', '=', MANUAL_PRICES_REVISION)
    .execute();
}

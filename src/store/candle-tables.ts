import { setTimeout as sleep } from 'node:timers/promises';
import type Sqlite from 'better-sqlite3';
import { sql, type Kysely } from 'kysely';
import { GRAINS, type Candle, type Grain, type StoredCandle } from '../domain/candle.js';
import { SQLITE_BULK_PACING, type RangeReads } from './db.js';
import type { Database, HistoryCandlesTable } from './tables.js';

const TABLES = { minute: 'history_minute', hour: 'history_hour', day: 'history_day' } as const;

/**
 * Where another thread can read the candle tables from: the SQLite file, or
 * the PostgreSQL database and schema (a render worker opens its own
 * connection to either).
 */
export type StoreLocation = { sqliteFile: string } | { databaseUrl: string; schema: string | null };

/** The table of a grain's candles. */
export function tableOf(grain: Grain): string {
  return TABLES[grain];
}

/** Values served per source and ten-minute bucket: what the status page draws. */
export interface SourceActivity {
  source: string;
  bucket: number;
  points: number;
}

/** The row of `store_revision` that counts history changes (row 1 counts account and key changes). */
const HISTORY_REVISION = 2;
/** The row of `store_revision` that holds the highest ingest-leader epoch that has written candles: the fence. */
const HISTORY_FENCE = 3;

/**
 * A batch refused because a leader with a newer epoch has written candles
 * since: the writer lost its lease (paused, partitioned) and must stop.
 */
export class FencedWriteError extends Error {
  constructor(
    /** The epoch the store holds, newer than the writer's. */
    readonly fence: number,
    readonly epoch: number,
  ) {
    super(`history write refused: epoch ${epoch} is older than the store's ${fence}`);
  }
}

const COLUMNS = ['start', 'open', 'high', 'low', 'close', 'points', 'source', 'close_at'] as const;

/** PostgreSQL locks rows, not the database: a bulk writer's transactions may be longer, and need no pause. */
const POSTGRES_BULK_TRANSACTION_MS = 250;

/** The candle tables: written in batches by the recorder and the import, read by history queries. */
export class HistoryRepository {
  private prepared: PreparedSqlite | null;
  /** In a bulk transaction: when its first write took SQLite's write lock. */
  private firstWriteAt: number | null = null;

  /**
   * `sqlite`: the embedded database's own handle. Its writes and range reads
   * then go through statements prepared once, which cost a fraction of
   * building each through the query builder (the recorder writes every
   * second, and the SQLite driver blocks the event loop while it does).
   */
  constructor(
    private readonly db: Kysely<Database>,
    sqlite?: Sqlite.Database,
    /** Where range reads of the SQLite file run off the event loop (the server's store); none reads on this thread. */
    private readonly rangePool: RangeReads | null = null,
    /** Where render workers read from; null: ranges are rendered on this thread (CLI commands, tests of the reader). */
    readonly location: StoreLocation | null = null,
  ) {
    this.prepared = sqlite ? new PreparedSqlite(sqlite) : null;
  }

  /** About how long one of a bulk writer's transactions should take on this store: the import sizes its chunks to it. */
  get bulkTransactionMs(): number {
    return this.prepared ? SQLITE_BULK_PACING.transactionMs : POSTGRES_BULK_TRANSACTION_MS;
  }

  /**
   * Run `work` in one transaction, with a repository bound to it, for a bulk
   * writer that runs many in a row. `work` may run twice, so it must touch
   * nothing but the store.
   *
   * SQLite has one write lock for the whole file, and a server on the same
   * file must get its writes in between. So the transaction first runs
   * deferred: its reads take no lock, the write lock is taken at its first
   * write and held only while it writes, and a transaction that writes
   * nothing never takes it. When another process holds the lock at that
   * moment, or has written since this one read, SQLite refuses the write at
   * once (waiting could not help: what was read may be stale); `work` then
   * runs again under `begin immediate`, which waits its turn (the busy
   * timeout) and holds the lock throughout. After a transaction that wrote,
   * the lock is left free for the pacing's pause, or as long as it was held
   * if that was longer (the process was descheduled, say): a writer that
   * waited through it retries further apart by then, and still gets in.
   */
  async bulkTransaction<T>(work: (repository: HistoryRepository) => Promise<T>): Promise<T> {
    if (!this.prepared) return this.db.transaction().execute((trx) => work(new HistoryRepository(trx)));
    let outcome: { result: T; heldMs: number };
    try {
      outcome = await this.sqliteTransaction('begin', work);
    } catch (error) {
      if (!/^SQLITE_BUSY/.test(String((error as { code?: unknown }).code))) throw error;
      outcome = await this.sqliteTransaction('begin immediate', work);
    }
    if (outcome.heldMs > 0) await sleep(Math.max(SQLITE_BULK_PACING.pauseMs, outcome.heldMs));
    return outcome.result;
  }

  /** `work` in a transaction begun with `begin`; how long it held the write lock (0: it wrote nothing). */
  private sqliteTransaction<T>(begin: 'begin' | 'begin immediate', work: (repository: HistoryRepository) => Promise<T>): Promise<{ result: T; heldMs: number }> {
    const prepared = this.prepared;
    return this.db.connection().execute(async (connection) => {
      const began = performance.now();
      await sql.raw(begin).execute(connection);
      try {
        const bound = new HistoryRepository(connection);
        // The same SQLite handle: its prepared statements run inside this transaction.
        bound.prepared = prepared;
        const result = await work(bound);
        await sql`commit`.execute(connection);
        const lockedAt = begin === 'begin immediate' ? began : bound.firstWriteAt;
        return { result, heldMs: lockedAt === null ? 0 : performance.now() - lockedAt };
      } catch (error) {
        await sql`rollback`.execute(connection).catch(() => {});
        throw error;
      }
    });
  }

  /**
   * Insert or replace candles whole, in one transaction: one statement per
   * grain. A candle is always written with its full state, so
   * writing the same candle again changes nothing.
   *
   * `epoch`: the writing leader's lease epoch (null: no fence, as in a single
   * process). In the same transaction the store's fence moves up to it, or the
   * whole batch is refused with FencedWriteError when a newer leader has
   * written: a leader that paused past its lease can never overwrite its
   * successor's candles with its own older ones.
   */
  async write(rows: readonly StoredCandle[], bumpRevision = false, epoch: number | null = null): Promise<void> {
    if (rows.length === 0) return;
    if (this.prepared) return this.prepared.write(rows, bumpRevision, epoch);
    await this.db.transaction().execute(async (trx) => {
      const repository = new HistoryRepository(trx);
      if (epoch !== null) await repository.claimFence(epoch);
      await repository.writeRows(rows);
      if (bumpRevision) await repository.bumpRevision();
    });
  }

  /**
   * The history revision: bumped by every change to the settled past (an
   * import, a batch written late), so readers drop what they cached of it.
   */
  async revision(): Promise<number> {
    const row = await this.db.selectFrom('store_revision').select('revision').where('id', '=', HISTORY_REVISION).executeTakeFirst();
    return Number(row?.revision ?? 0);
  }

  /** The highest leader epoch that has written candles (0 before any fenced write). */
  async fence(): Promise<number> {
    const row = await this.db.selectFrom('store_revision').select('revision').where('id', '=', HISTORY_FENCE).executeTakeFirst();
    return Number(row?.revision ?? 0);
  }

  /**
   * Move the fence up to `epoch`, or refuse with FencedWriteError. Inside a
   * write's transaction the row lock orders two leaders' writes and the loser
   * sees the winner's epoch; alone, it marks a new leadership before its first
   * write, so a predecessor waking up meanwhile is refused at once.
   */
  async claimFence(epoch: number): Promise<void> {
    const result = await this.db.updateTable('store_revision').set({ revision: epoch }).where('id', '=', HISTORY_FENCE).where('revision', '<=', epoch).executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) throw new FencedWriteError(await this.fence(), epoch);
  }

  async bumpRevision(): Promise<void> {
    await this.db.updateTable('store_revision').set({ revision: sql`revision + 1` }).where('id', '=', HISTORY_REVISION).execute();
  }

  /**
   * `write` inside a transaction already open. PostgreSQL gets each grain's
   * rows as one array per column, unnested: one statement of nine parameters
   * however many rows, which costs a fraction of a multi-row VALUES list to
   * build, send and parse.
   */
  async writeRows(rows: readonly StoredCandle[]): Promise<void> {
    this.firstWriteAt ??= performance.now();
    if (this.prepared) return this.prepared.upsert(rows);
    for (const grain of GRAINS) {
      const part = rows.filter((row) => row.grain === grain);
      if (part.length === 0) continue;
      const column = <T>(pick: (row: StoredCandle) => T) => part.map(pick);
      await sql`
        insert into ${sql.table(TABLES[grain])} (reference, start, open, high, low, close, points, source, close_at)
        select * from unnest(
          ${column((r) => r.reference)}::text[], ${column((r) => r.candle.start)}::bigint[],
          ${column((r) => r.candle.open)}::text[], ${column((r) => r.candle.high)}::text[], ${column((r) => r.candle.low)}::text[], ${column((r) => r.candle.close)}::text[],
          ${column((r) => r.candle.points)}::integer[], ${column((r) => r.candle.source)}::text[], ${column((r) => r.candle.closeAt)}::bigint[])
        on conflict (reference, start) do update set
          open = excluded.open, high = excluded.high, low = excluded.low, close = excluded.close,
          points = excluded.points, source = excluded.source, close_at = excluded.close_at`.execute(this.db);
    }
  }

  /** A reference's candles with `from <= start < to`, oldest first. */
  async range(grain: Grain, reference: string, from: number, to: number): Promise<Candle[]> {
    if (this.rangePool) return this.rangePool.read(TABLES[grain], reference, from, to);
    if (this.prepared) return this.prepared.range(grain, reference, from, to);
    const rows = await this.db
      .selectFrom(TABLES[grain] as 'history_minute')
      .select(COLUMNS)
      .where('reference', '=', reference)
      .where('start', '>=', from)
      .where('start', '<', to)
      .orderBy('start')
      .execute();
    return rows.map(fromRow);
  }

  /** A reference's last candle starting at or before `at`. */
  async lastAtOrBefore(grain: Grain, reference: string, at: number): Promise<Candle | null> {
    // On SQLite the driver blocks while it reads: in the server that is a worker thread's time, not the event loop's.
    if (this.rangePool) return this.rangePool.lastAtOrBefore(TABLES[grain], reference, at);
    const row = await this.db
      .selectFrom(TABLES[grain] as 'history_minute')
      .select(COLUMNS)
      .where('reference', '=', reference)
      .where('start', '<=', at)
      .orderBy('start', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row ? fromRow(row) : null;
  }

  /** Every reference's candle starting exactly at `start`. */
  async startingAt(grain: Grain, start: number): Promise<Map<string, Candle>> {
    const rows = await this.db
      .selectFrom(TABLES[grain] as 'history_minute')
      .select(['reference', ...COLUMNS])
      .where('start', '=', start)
      .execute();
    return new Map(rows.map((row) => [row.reference, fromRow(row)]));
  }

  /** Every reference's last candle starting before `before`. */
  async latestBefore(grain: Grain, before: number): Promise<Map<string, Candle>> {
    const table = TABLES[grain] as 'history_minute';
    const rows = await this.db
      .selectFrom(table)
      .innerJoin(
        (eb) => eb.selectFrom(table).select(['reference', (e) => e.fn.max('start').as('last')]).where('start', '<', before).groupBy('reference').as('latest'),
        (join) => join.onRef('latest.reference', '=', `${table}.reference`).onRef('latest.last', '=', `${table}.start`),
      )
      .select([`${table}.reference`, ...COLUMNS.map((column) => `${table}.${column}` as const)])
      .execute();
    return new Map(rows.map((row) => [row.reference, fromRow(row)]));
  }

  /** Delete candles starting before `before`; returns how many went. */
  async pruneBefore(grain: Grain, before: number): Promise<number> {
    const result = await this.db
      .deleteFrom(TABLES[grain] as 'history_minute')
      .where('start', '<', before)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /** True when no candle of any grain is stored. */
  async isEmpty(): Promise<boolean> {
    for (const grain of GRAINS) {
      const row = await this.db
        .selectFrom(TABLES[grain] as 'history_minute')
        .select('start')
        .limit(1)
        .executeTakeFirst();
      if (row) return false;
    }
    return true;
  }

  /**
   * When the newest value in the history was recorded: the latest close among the minute candles
   * of the newest minute stored (two lookups on the start index); null while there is none.
   */
  async newestClose(): Promise<number | null> {
    const row = await this.db
      .selectFrom('history_minute')
      .select((eb) => eb.fn.max('close_at').as('close_at'))
      .where('start', '=', (eb) => eb.selectFrom('history_minute').select((inner) => inner.fn.max('start').as('start')))
      .executeTakeFirst();
    return row?.close_at === null || row?.close_at === undefined ? null : Number(row.close_at);
  }

  /** Points per closing source and bucket of `bucketMs` in the minute candles since `since`. */
  async activity(since: number, bucketMs: number): Promise<SourceActivity[]> {
    const bucket = sql<number>`start - (start % ${sql.lit(bucketMs)})`;
    const rows = await this.db
      .selectFrom('history_minute')
      .select(['source', bucket.as('bucket'), (eb) => eb.fn.sum<number>('points').as('points')])
      .where('start', '>=', since)
      .groupBy(['source', bucket])
      .execute();
    return rows.map((row) => ({ source: row.source, bucket: Number(row.bucket), points: Number(row.points) }));
  }
}

function fromRow(row: Omit<HistoryCandlesTable, 'reference'>): Candle {
  return {
    start: Number(row.start),
    open: row.open,
    high: row.high,
    low: row.low,
    close: row.close,
    points: Number(row.points),
    source: row.source,
    closeAt: Number(row.close_at),
  };
}

/** The embedded database's hot statements, prepared once per grain. */
class PreparedSqlite {
  private readonly upserts: Record<Grain, Sqlite.Statement>;
  private readonly ranges: Record<Grain, Sqlite.Statement>;
  private readonly bump: Sqlite.Statement;
  private readonly writeAll: (rows: readonly StoredCandle[], bumpRevision: boolean, epoch: number | null) => void;
  private readonly claim: Sqlite.Statement;
  private readonly readFence: Sqlite.Statement;

  constructor(sqlite: Sqlite.Database) {
    const upsert = (table: string) =>
      sqlite.prepare(
        `insert into ${table} (reference, start, open, high, low, close, points, source, close_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?) ` +
          'on conflict (reference, start) do update set open = excluded.open, high = excluded.high, low = excluded.low, close = excluded.close, ' +
          'points = excluded.points, source = excluded.source, close_at = excluded.close_at',
      );
    const range = (table: string) => sqlite.prepare(`select start, open, high, low, close, points, source, close_at from ${table} where reference = ? and start >= ? and start < ? order by start`).raw(true);
    this.upserts = { minute: upsert(TABLES.minute), hour: upsert(TABLES.hour), day: upsert(TABLES.day) };
    this.ranges = { minute: range(TABLES.minute), hour: range(TABLES.hour), day: range(TABLES.day) };
    this.bump = sqlite.prepare(`update store_revision set revision = revision + 1 where id = ${HISTORY_REVISION}`);
    this.claim = sqlite.prepare(`update store_revision set revision = ? where id = ${HISTORY_FENCE} and revision <= ?`);
    this.readFence = sqlite.prepare(`select revision from store_revision where id = ${HISTORY_FENCE}`).pluck();
    this.writeAll = sqlite.transaction((rows: readonly StoredCandle[], bumpRevision: boolean, epoch: number | null) => {
      // Thrown inside the transaction, the refusal rolls it back whole.
      if (epoch !== null && this.claim.run(epoch, epoch).changes === 0) throw new FencedWriteError(Number(this.readFence.get() ?? 0), epoch);
      this.upsert(rows);
      if (bumpRevision) this.bump.run();
    });
  }

  /** Inside a transaction already open. */
  upsert(rows: readonly StoredCandle[]): void {
    for (const { grain, reference, candle: c } of rows) this.upserts[grain].run(reference, c.start, c.open, c.high, c.low, c.close, c.points, c.source, c.closeAt);
  }

  write(rows: readonly StoredCandle[], bumpRevision: boolean, epoch: number | null): void {
    this.writeAll(rows, bumpRevision, epoch);
  }

  range(grain: Grain, reference: string, from: number, to: number): Candle[] {
    const rows = this.ranges[grain].all(reference, from, to) as [number, string, string, string, string, number, string, number][];
    return rows.map(([start, open, high, low, close, points, source, closeAt]) => ({ start, open, high, low, close, points, source, closeAt }));
  }
}

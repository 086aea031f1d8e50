import { statSync } from 'node:fs';
import { sql } from 'kysely';
import { AccountRepository } from './account-repository.js';
import { connect, migrate, type Connection, type RangeReads, type StoreOptions } from './db.js';
import { describeStoreError, redactUrl, StoreUnavailableError } from './store-errors.js';
import { StoreHealth } from './store-health.js';
import { HistoryRepository } from './candle-tables.js';
import { KeyRepository } from './key-repository.js';
import { ManualPriceRepository } from './manual-price-repository.js';
import { MarketCalendarRepository } from './market-calendar-repository.js';
import { UsageRepository } from './usage-repository.js';
import { WebhookRepository } from './webhook-repository.js';

/** The persistent store, whichever dialect: repositories over one connection, and whether it answers. */
export class Store {
  readonly accounts: AccountRepository;
  readonly keys: KeyRepository;
  readonly usage: UsageRepository;
  readonly history: HistoryRepository;
  readonly webhooks: WebhookRepository;
  readonly manualPrices: ManualPriceRepository;
  readonly calendar: MarketCalendarRepository;
  readonly health: StoreHealth;
  /** The SQLite file's inode when opened: a different one (or none) means the file was removed or replaced. */
  private readonly sqliteInode: bigint | null;
  /** SQLite range reads in worker threads (started on the first read). */
  private readonly rangePool: RangeReads | null;

  private constructor(
    readonly connection: Connection,
    private readonly schema: string | undefined,
    health: StoreHealth,
    rangeThreads: StoreOptions['rangeThreads'],
    databaseUrl: string | null,
  ) {
    this.accounts = new AccountRepository(connection.db);
    this.keys = new KeyRepository(connection.db);
    this.usage = new UsageRepository(connection.db);
    this.rangePool = rangeThreads && connection.sqliteFile ? rangeThreads(connection.sqliteFile) : null;
    // With range threads, history answers are also rendered off the event loop, by threads that read the store themselves.
    const location = !rangeThreads ? null : connection.sqliteFile ? { sqliteFile: connection.sqliteFile } : databaseUrl ? { databaseUrl, schema: schema ?? null } : null;
    this.history = new HistoryRepository(connection.db, connection.sqlite, this.rangePool, location);
    this.webhooks = new WebhookRepository(connection.db);
    this.manualPrices = new ManualPriceRepository(connection.db);
    this.calendar = new MarketCalendarRepository(connection.db);
    this.health = health;
    this.sqliteInode = connection.sqliteFile ? inodeOf(connection.sqliteFile) : null;
  }

  /** Connect and migrate; a database that cannot be reached is one `StoreUnavailableError` line. */
  static async open(options: StoreOptions, now = Date.now()): Promise<Store> {
    const health = new StoreHealth(now);
    let connection: Connection;
    try {
      connection = connect(options, (error) => health.failed(error, Date.now()));
    } catch (error) {
      throw new StoreUnavailableError(describeStoreError(error), where(options));
    }
    try {
      await migrate(connection);
    } catch (error) {
      await connection.db.destroy().catch(() => {});
      throw new StoreUnavailableError(describeStoreError((error as { cause?: unknown }).cause ?? error), where(options));
    }
    return new Store(connection, options.schema, health, options.rangeThreads, options.databaseUrl);
  }

  get dialect() {
    return this.connection.dialect;
  }

  /**
   * Ask the database a trivial question and record the answer in `health`.
   * An SQLite file that was removed or replaced under us counts as down: its
   * writes would go to a file nobody will ever read again.
   */
  async ping(now = Date.now()): Promise<boolean> {
    const file = this.connection.sqliteFile;
    if (file && inodeOf(file) !== this.sqliteInode) {
      this.health.failed('database file removed or replaced; restart to reopen it', now);
      return false;
    }
    try {
      await sql`select 1`.execute(this.connection.db);
      this.health.succeeded(now);
      return true;
    } catch (error) {
      this.health.failed(error, now);
      return false;
    }
  }

  /** Close the connection; `dropSchema` removes a PostgreSQL schema made for one test run. */
  async close(options: { dropSchema?: boolean } = {}): Promise<void> {
    if (options.dropSchema && this.schema && this.dialect === 'postgres') {
      await sql.raw(`drop schema if exists ${this.schema} cascade`).execute(this.connection.db);
    }
    await this.rangePool?.close();
    await this.connection.db.destroy();
  }
}

function where(options: StoreOptions): string {
  return options.databaseUrl ? redactUrl(options.databaseUrl) : `in ${options.dataDir}`;
}

function inodeOf(file: string): bigint | null {
  try {
    return statSync(file, { bigint: true }).ino;
  } catch {
    return null;
  }
}

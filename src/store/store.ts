import { sql } from 'kysely';
import { AccountRepository } from './accounts.js';
import { connect, migrate, type Connection, type StoreOptions } from './db.js';
import { KeyRepository } from './keys.js';
import { UsageRepository } from './usage.js';

/** The persistent store, whichever dialect: repositories over one connection. */
export class Store {
  readonly accounts: AccountRepository;
  readonly keys: KeyRepository;
  readonly usage: UsageRepository;

  private constructor(
    readonly connection: Connection,
    private readonly schema: string | undefined,
  ) {
    this.accounts = new AccountRepository(connection.db);
    this.keys = new KeyRepository(connection.db);
    this.usage = new UsageRepository(connection.db);
  }

  static async open(options: StoreOptions): Promise<Store> {
    const connection = connect(options);
    try {
      await migrate(connection);
    } catch (error) {
      await connection.db.destroy();
      throw error;
    }
    return new Store(connection, options.schema);
  }

  get dialect() {
    return this.connection.dialect;
  }

  /** True when the store answers a trivial query. */
  async ping(): Promise<boolean> {
    try {
      await sql`select 1`.execute(this.connection.db);
      return true;
    } catch {
      return false;
    }
  }

  /** Close the connection; `dropSchema` removes a PostgreSQL schema made for one test run. */
  async close(options: { dropSchema?: boolean } = {}): Promise<void> {
    if (options.dropSchema && this.schema && this.dialect === 'postgres') {
      await sql.raw(`drop schema if exists ${this.schema} cascade`).execute(this.connection.db);
    }
    await this.connection.db.destroy();
  }
}

import { sql } from 'kysely';
import { AccountRepository } from './accounts.js';
import { connect, migrate, type Connection, type StoreOptions } from './db.js';
import { KeyRepository } from './keys.js';

/** The persistent store, whichever dialect: repositories over one connection. */
export class Store {
  readonly accounts: AccountRepository;
  readonly keys: KeyRepository;

  private constructor(readonly connection: Connection) {
    this.accounts = new AccountRepository(connection.db);
    this.keys = new KeyRepository(connection.db);
  }

  static async open(options: StoreOptions): Promise<Store> {
    const connection = connect(options);
    try {
      await migrate(connection);
    } catch (error) {
      await connection.db.destroy();
      throw error;
    }
    return new Store(connection);
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

  async close(): Promise<void> {
    await this.connection.db.destroy();
  }
}

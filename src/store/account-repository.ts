import { randomBytes } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { PlanOverrides } from '../domain/plan.js';
import type { AccountsTable, Database } from './tables.js';

export interface Account {
  id: string;
  username: string;
  plan: string;
  status: 'active' | 'suspended';
  /** Selected references; null means the plan's defaults. */
  references: string[] | null;
  /** Allowed browser origins; null means any origin. */
  origins: string[] | null;
  overrides: PlanOverrides | null;
  created_at: number;
  updated_at: number;
}

export type AccountChanges = Partial<Pick<Account, 'plan' | 'status' | 'references' | 'origins' | 'overrides'>>;

export class DuplicateError extends Error {}

/** Record that accounts or keys changed, in the same transaction as the change. */
export async function bumpRevision(trx: Transaction<Database> | Kysely<Database>): Promise<void> {
  await trx.updateTable('store_revision').set({ revision: sql`revision + 1` }).where('id', '=', 1).execute();
}

export class AccountRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async create(username: string, plan: string, now = Date.now()): Promise<Account> {
    const row: AccountsTable = {
      id: `acc_${randomBytes(8).toString('hex')}`,
      username,
      plan,
      status: 'active',
      references_json: null,
      origins_json: null,
      overrides_json: null,
      created_at: now,
      updated_at: now,
    };
    if (await this.find(username)) throw new DuplicateError(`account "${username}" already exists`);
    try {
      await this.db.transaction().execute(async (trx) => {
        await trx.insertInto('accounts').values(row).execute();
        await bumpRevision(trx);
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw new DuplicateError(`account "${username}" already exists`);
      throw error;
    }
    return toAccount(row);
  }

  async find(username: string): Promise<Account | null> {
    const row = await this.db.selectFrom('accounts').selectAll().where('username', '=', username).executeTakeFirst();
    return row ? toAccount(row) : null;
  }

  async list(): Promise<Account[]> {
    const rows = await this.db.selectFrom('accounts').selectAll().orderBy('username').execute();
    return rows.map(toAccount);
  }

  async count(): Promise<number> {
    const row = await this.db.selectFrom('accounts').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  async update(username: string, changes: AccountChanges, now = Date.now()): Promise<Account | null> {
    const set: Partial<AccountsTable> = { updated_at: now };
    if (changes.plan !== undefined) set.plan = changes.plan;
    if (changes.status !== undefined) set.status = changes.status;
    if (changes.references !== undefined) set.references_json = changes.references === null ? null : JSON.stringify(changes.references);
    if (changes.origins !== undefined) set.origins_json = changes.origins === null ? null : JSON.stringify(changes.origins);
    if (changes.overrides !== undefined) set.overrides_json = changes.overrides === null ? null : JSON.stringify(changes.overrides);
    const updated = await this.db.transaction().execute(async (trx) => {
      const result = await trx.updateTable('accounts').set(set).where('username', '=', username).executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) return false;
      await bumpRevision(trx);
      return true;
    });
    return updated ? this.find(username) : null;
  }

  async revision(): Promise<number> {
    const row = await this.db.selectFrom('store_revision').select('revision').where('id', '=', 1).executeTakeFirst();
    return Number(row?.revision ?? 0);
  }
}

export function toAccount(row: AccountsTable): Account {
  return {
    id: row.id,
    username: row.username,
    plan: row.plan,
    status: row.status,
    references: row.references_json ? (JSON.parse(row.references_json) as string[]) : null,
    origins: row.origins_json ? (JSON.parse(row.origins_json) as string[]) : null,
    overrides: row.overrides_json ? (JSON.parse(row.overrides_json) as PlanOverrides) : null,
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
  };
}

/** SQLite and PostgreSQL report a unique-constraint violation differently. */
function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === '23505';
}

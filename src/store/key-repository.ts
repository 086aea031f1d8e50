import type { Kysely } from 'kysely';
import { generateKey, generateKeyId, hashKey } from '../domain/key-material.js';
import { bumpRevision } from './account-repository.js';
import type { ApiKeysTable, Database } from './tables.js';

/** A key as listed: everything but the key, which is never stored. */
export interface ApiKeyInfo {
  id: string;
  account_id: string;
  label: string | null;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
  last_used_at: number | null;
}

export interface IssuedKey extends ApiKeyInfo {
  /** The key itself: shown once, at issue. */
  key: string;
}

/** What the server needs to authenticate: live keys by hash. */
export interface KeyCredential {
  id: string;
  account_id: string;
  hash: string;
  expires_at: number | null;
}

export class KeyRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async issue(accountId: string, options: { label?: string | null; expiresAt?: number | null } = {}, now = Date.now()): Promise<IssuedKey> {
    const key = generateKey();
    const row: ApiKeysTable = {
      id: generateKeyId(),
      account_id: accountId,
      hash: hashKey(key),
      label: options.label ?? null,
      created_at: now,
      expires_at: options.expiresAt ?? null,
      revoked_at: null,
      last_used_at: null,
    };
    await this.db.transaction().execute(async (trx) => {
      await trx.insertInto('api_keys').values(row).execute();
      await bumpRevision(trx);
    });
    return { ...toInfo(row), key };
  }

  async list(accountId: string): Promise<ApiKeyInfo[]> {
    const rows = await this.db.selectFrom('api_keys').selectAll().where('account_id', '=', accountId).orderBy('created_at').orderBy('id').execute();
    return rows.map(toInfo);
  }

  async find(id: string): Promise<ApiKeyInfo | null> {
    const row = await this.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toInfo(row) : null;
  }

  /** True when the key existed and was live; revoking twice is harmless. */
  async revoke(id: string, now = Date.now()): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const result = await trx.updateTable('api_keys').set({ revoked_at: now }).where('id', '=', id).where('revoked_at', 'is', null).executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) return false;
      await bumpRevision(trx);
      return true;
    });
  }

  /** Every key not revoked, for the in-memory directory. */
  async credentials(): Promise<KeyCredential[]> {
    return this.db.selectFrom('api_keys').select(['id', 'account_id', 'hash', 'expires_at']).where('revoked_at', 'is', null).execute();
  }

  /** Best-effort bookkeeping; it does not bump the revision (nothing about access changed). */
  async touch(lastUsed: ReadonlyMap<string, number>): Promise<void> {
    if (lastUsed.size === 0) return;
    await this.db.transaction().execute(async (trx) => {
      for (const [id, at] of lastUsed) {
        await trx.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
      }
    });
  }
}

function toInfo(row: ApiKeysTable): ApiKeyInfo {
  return {
    id: row.id,
    account_id: row.account_id,
    label: row.label,
    created_at: Number(row.created_at),
    expires_at: row.expires_at === null ? null : Number(row.expires_at),
    revoked_at: row.revoked_at === null ? null : Number(row.revoked_at),
    last_used_at: row.last_used_at === null ? null : Number(row.last_used_at),
  };
}

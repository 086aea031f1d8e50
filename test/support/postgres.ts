import assert from 'node:assert/strict';
import pg from 'pg';
import { POSTGRES_URL } from './services.js';

/** A PostgreSQL database of the test's own on the test server. */
export interface TestDatabase {
  name: string;
  url: string;
  /** End every connection still open to it (a node killed leaves its own behind) and drop it. */
  drop(): Promise<void>;
}

/**
 * Create `nerkh_<label>_<pid>_<random>` on the test server
 * (NERKH_TEST_DATABASE_URL, which must be set), so that no other test run
 * shares its tables; `label` is the test's, in letters and underscores.
 */
export async function freshDatabase(label: string): Promise<TestDatabase> {
  assert.ok(POSTGRES_URL, 'NERKH_TEST_DATABASE_URL must be set: this test needs its own PostgreSQL database');
  const admin = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 });
  const name = `nerkh_${label}_${process.pid}_${Math.floor(Math.random() * 1e6)}`;
  await admin.query(`create database ${name}`);
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    async drop() {
      // A pool that has just ended may still be closing its sockets: they go by themselves within moments, and ending
      // them from here instead would reach a client that no longer listens for errors (an uncaught exception in the test).
      for (let waited = 0; waited < 2000; waited += 50) {
        const { rows } = await admin.query<{ open: number }>(`select count(*)::int as open from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()`, [name]);
        if (rows[0]!.open === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()`, [name]).catch(() => {});
      await admin.query(`drop database if exists ${name}`);
      await admin.end();
    },
  };
}

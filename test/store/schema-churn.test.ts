/**
 * A store migrates in its own PostgreSQL schema while another client creates
 * and drops schemas in the same database (other tenants, parallel test runs).
 * Kysely's own introspector listed every schema's tables, calling functions
 * on each schema's name, and failed with "schema … does not exist" when one
 * was dropped in between; the store's introspector looks in its schema alone.
 */
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { connect, migrate } from '../../src/store/db.js';
import { freshDatabase, type TestDatabase } from '../support/postgres.js';
import { needs } from '../support/services.js';

describe('PostgreSQL: migrating beside schemas that come and go', needs('postgres'), () => {
  let database: TestDatabase;
  before(async () => {
    database = await freshDatabase('schema_churn');
  });
  after(async () => database?.drop());

  it('never fails on a schema another client drops meanwhile', async () => {
    const churn = new pg.Pool({ connectionString: database.url, max: 2 });
    churn.on('error', () => {});
    let stop = false;
    let churned = 0;
    // Another client: schemas with tables, created and dropped as fast as the server allows.
    const churning = (async () => {
      while (!stop) {
        const name = `other_${randomInt(1e9)}`;
        await churn.query(`create schema ${name}; create table ${name}.t (id serial primary key, v text)`);
        await churn.query(`drop schema ${name} cascade`);
        churned++;
      }
    })();
    try {
      for (let i = 0; i < 12; i++) {
        const schema = `nerkh_churn_${i}_${randomInt(1e9)}`;
        const connection = connect({ databaseUrl: database.url, dataDir: '', schema });
        try {
          await migrate(connection);
          // Migrated to the latest: migrating again finds the migration table and has nothing to do.
          await migrate(connection);
        } finally {
          await connection.db.destroy();
        }
      }
    } finally {
      stop = true;
      await churning;
      await churn.end();
    }
    assert.ok(churned > 0, 'the other client made and dropped schemas meanwhile');
  });
});

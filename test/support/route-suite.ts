import assert from 'node:assert/strict';
import { after, before, describe } from 'node:test';
import type { TSchema } from '@sinclair/typebox';
import type { LightMyRequestResponse } from 'fastify';
import { Value } from '@sinclair/typebox/value';
import { API_SCHEMAS } from '../../src/http/endpoints/registry.js';
import { dialects, startHarness, type Harness } from './harness.js';

/** What an endpoint's route tests ask through: the in-process app of this dialect, and an enterprise key of it. */
export interface RouteSuite {
  readonly harness: Harness;
  readonly key: string;
  /** A GET (or anything `inject` takes by URL) with the key, and `headers` beside it. */
  get(url: string, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
}

/**
 * One endpoint's route tests on every dialect (SQLite, and PostgreSQL when the
 * tests have one): an app started in process per dialect, with account "acme"
 * on the enterprise plan. The test file beside an endpoint's route
 * (`src/http/endpoints/<name>/route.test.ts`) is one call of this.
 */
export function routeSuite(title: string, tests: (suite: RouteSuite) => void): void {
  for (const dialect of dialects()) {
    describe(`${title} (${dialect.name})`, dialect.options, () => {
      let harness: Harness;
      let key = '';
      const suite: RouteSuite = {
        get harness() {
          return harness;
        },
        get key() {
          return key;
        },
        get: (url, headers = {}) => harness.app.inject({ url, headers: { 'x-api-key': key, ...headers } }),
      };
      before(async () => {
        harness = await startHarness({ databaseUrl: dialect.databaseUrl });
        ({ key } = await harness.keyFor('acme', 'enterprise'));
      });
      after(() => harness.close());
      tests(suite);
    });
  }
}

/** Responses are checked against the same schemas the OpenAPI document is generated from. */
export function assertMatches(schema: TSchema, body: unknown): void {
  const ok = Value.Check(schema, API_SCHEMAS, body);
  assert.ok(ok, `response does not match ${schema.$id}: ${JSON.stringify([...Value.Errors(schema, API_SCHEMAS, body)].slice(0, 3).map((e) => `${e.path} ${e.message}`))}`);
}

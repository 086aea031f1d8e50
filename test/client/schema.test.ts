/**
 * The client's generated types (clients/typescript/src/schema.ts) must be what
 * openapi-typescript makes of the document the server serves now: a route or
 * schema change without `npm run generate -w @nerkh/client` fails here.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { committedSchema, schemaSource, serverDocument } from '../../clients/typescript/scripts/schema.js';

describe('@nerkh/client generated types', () => {
  it('match the server’s current /openapi.json', async () => {
    const expected = await schemaSource(await serverDocument());
    const committed = committedSchema();
    if (committed !== expected) {
      const committedLines = committed.split('\n');
      const expectedLines = expected.split('\n');
      const line = expectedLines.findIndex((text, i) => text !== committedLines[i]);
      assert.fail(
        `clients/typescript/src/schema.ts is out of date with /openapi.json (first difference at line ${line + 1}:\n` +
          `  committed: ${JSON.stringify(committedLines[line])}\n  expected:  ${JSON.stringify(expectedLines[line])}).\n` +
          'Run `npm run generate -w @nerkh/client` and commit the result.',
      );
    }
  });
});

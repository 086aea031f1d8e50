/**
 * The client's types come from the server's own OpenAPI document: the real
 * service is assembled in process (as the tests do), /openapi.json is read from
 * it, and openapi-typescript turns it into src/schema.ts. The test that keeps
 * the two in step (test/client/schema.test.ts) uses these same functions.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString, COMMENT_HEADER, type OpenAPI3 } from 'openapi-typescript';
import { startHarness } from '../../../test/support/harness.js';

export const SCHEMA_FILE = fileURLToPath(new URL('../src/schema.ts', import.meta.url));

const HEADER = `${COMMENT_HEADER.trimEnd()}\n// Regenerate with \`npm run generate -w @nerkh/client\` after changing a route or schema.\n\n`;

/** The document the current code serves at /openapi.json. */
export async function serverDocument(): Promise<OpenAPI3> {
  const harness = await startHarness();
  try {
    const response = await harness.app.inject({ url: '/openapi.json' });
    if (response.statusCode !== 200) throw new Error(`/openapi.json answered ${response.statusCode}`);
    return JSON.parse(response.body) as OpenAPI3;
  } finally {
    await harness.close();
  }
}

/** The TypeScript source openapi-typescript makes of `document`. */
export async function schemaSource(document: OpenAPI3): Promise<string> {
  return HEADER + astToString(await openapiTS(document, { silent: true }));
}

export function committedSchema(): string {
  return readFileSync(SCHEMA_FILE, 'utf8');
}

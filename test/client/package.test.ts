/**
 * The workspace as an installed package: `@nerkh/client` resolves by name to
 * the build in clients/typescript/dist (npm test builds first), with the
 * declarations beside it.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const NAME = '@nerkh/client';
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

describe('@nerkh/client as a package', () => {
  it('loads by its name from the build, declarations included', async () => {
    const entry = createRequire(import.meta.url).resolve(NAME);
    assert.match(entry, /clients[\\/]typescript[\\/]dist[\\/]index\.js$/);
    assert.ok(existsSync(join(dirname(entry), 'index.d.ts')), 'existsSync(join(dirname(entry), \'index.d.ts\'))');
    const loaded = (await import(NAME)) as Record<string, unknown>;
    for (const name of ['NerkhClient', 'NerkhError', 'RateStream', 'parseRetryAfter', 'UNKNOWN_ERROR']) assert.ok(name in loaded, name);
    const client = new (loaded.NerkhClient as new (options: { baseUrl: string }) => { api: unknown })({ baseUrl: 'http://127.0.0.1:9' });
    assert.equal(typeof client.api, 'object');
  });

  it('loads from CommonJS with require, as its README says (Node 20.19+ and 22.12+ require ES modules)', async () => {
    // `node -e` runs CommonJS, resolving from the repository root as a CommonJS project would.
    const { stdout } = await run(process.execPath, ['-e', `const { NerkhClient } = require('${NAME}'); console.log(typeof NerkhClient);`], { cwd: ROOT });
    assert.equal(stdout.trim(), 'function');
  });
});

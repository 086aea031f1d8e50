import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { copyFileSync, linkSync, mkdirSync, readFileSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { tempDir } from '../support/env.js';

/**
 * The recipe of docs/ARCHITECTURE.md#how-to-add-an-endpoint, followed to the
 * letter on a copy of the code: one new folder and one entry in the registry,
 * nothing else. The copy's app must then answer the new route, list it among
 * its keyed routes (what the security suite runs against) and document it,
 * with its schema, in /openapi.json (what the client is generated from). A
 * recipe that needed another step fails here.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const REGISTRY = 'src/http/endpoints/registry.ts';

const TOY_SCHEMA = `import { Type } from '@sinclair/typebox';

export const ToyResponse = Type.Object(
  { success: Type.Literal(true), status: Type.Literal('ok'), generated_at: Type.String(), toy: Type.String() },
  { $id: 'ToyResponse', additionalProperties: false },
);
`;

const TOY_ROUTE = `import { okHead } from '../../../render/envelope.js';
import { keyedEndpoint } from '../../pipeline/endpoint.js';
import { queryParams } from '../../pipeline/params.js';
import { endpointModule } from '../module.js';
import { ToyResponse } from './schema.js';

export const endpoint = endpointModule({
  build: ({ deps }) =>
    keyedEndpoint({
      path: '/v1/toy',
      service: 'status',
      query: queryParams({ name: { type: 'string', maxLength: 20, description: 'Who to greet' } }),
      doc: { tags: ['status'], summary: 'A toy', ok: ToyResponse, conditional: false, errors: [400, 401, 403, 429] },
      answer: 'rendered',
      render: (exchange, _account, params) => ({ body: okHead(deps.time.format(exchange.now)) + ',"toy":' + JSON.stringify(params.name ?? 'hello') + '}', etag: null, maxAgeSeconds: 0 }),
    }),
  schemas: [ToyResponse],
  examples: { '/v1/toy': () => '/v1/toy?name=toy' },
});
`;

const CHECK = `import { ENDPOINTS } from '../src/http/endpoints/registry.js';
import { startHarness } from './support/harness.js';

const harness = await startHarness();
try {
  const { key } = await harness.keyFor('toy-user');
  const answer = await harness.app.inject({ url: '/v1/toy?name=toy', headers: { 'x-api-key': key } });
  const unkeyed = await harness.app.inject({ url: '/v1/toy' });
  const document = JSON.parse((await harness.app.inject({ url: '/openapi.json' })).body);
  console.log(JSON.stringify({
    status: answer.statusCode,
    body: JSON.parse(answer.body),
    unkeyed: unkeyed.statusCode,
    keyedRoutes: harness.app.keyedRoutes.map((route) => route.url),
    examples: ENDPOINTS.flatMap((endpoint) => Object.keys(endpoint.examples)),
    operation: document.paths['/v1/toy']?.get ?? null,
    schema: document.components.schemas.ToyResponse ?? null,
  }));
} finally {
  await harness.close();
}
`;

/** The registry with one more entry: its import beside the others, its name at the end of the list. */
function withToy(registry: string): string {
  const imports = registry.lastIndexOf('\nimport ');
  const end = registry.indexOf('\n', imports + 1);
  const listEnd = registry.indexOf('\n];', registry.indexOf('export const ENDPOINTS')) + 1;
  assert.ok(imports > 0 && listEnd > end, 'the registry is a list of imports and one array');
  return registry.slice(0, end + 1) + "import { endpoint as toy } from './toy/route.js';\n" + registry.slice(end + 1, listEnd) + '  toy,\n' + registry.slice(listEnd);
}

describe('adding an endpoint (docs/ARCHITECTURE.md)', () => {
  it('takes one folder and one registry entry', async () => {
    const dir = tempDir('nerkh-recipe-');
    try {
      const copy = dir.path;
      // Hard links to the code, the tests' support and the data: quick, and read only (files written below are unlinked first).
      // A set: a file in the middle of a merge is listed once per stage.
      const files = new Set(execFileSync('git', ['ls-files', '-co', '--exclude-standard', '--', 'src', 'test/support', 'data', 'package.json'], { cwd: ROOT, encoding: 'utf8' })
        .split('\n')
        // Not what the suite's compiled copy emits beside each .ts (test/support/compile.ts): tsx would load that instead.
        .filter((file) => file !== '' && !/\.js(\.map)?$/.test(file)));
      for (const file of files) {
        mkdirSync(dirname(join(copy, file)), { recursive: true });
        try {
          linkSync(join(ROOT, file), join(copy, file));
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          // Another file system: a copy does as well.
          if (code === 'EXDEV') copyFileSync(join(ROOT, file), join(copy, file));
          // Deleted from the checkout but not yet from git's index.
          else if (code !== 'ENOENT') throw error;
        }
      }
      symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'));

      // The recipe: a folder …
      mkdirSync(join(copy, 'src/http/endpoints/toy'));
      writeFileSync(join(copy, 'src/http/endpoints/toy/schema.ts'), TOY_SCHEMA);
      writeFileSync(join(copy, 'src/http/endpoints/toy/route.ts'), TOY_ROUTE);
      // … and its entry in the registry.
      const registry = readFileSync(join(ROOT, REGISTRY), 'utf8');
      unlinkSync(join(copy, REGISTRY));
      writeFileSync(join(copy, REGISTRY), withToy(registry));

      writeFileSync(join(copy, 'test/check.ts'), CHECK);
      const output = await new Promise<string>((resolve, reject) => {
        execFile(process.execPath, ['--import', 'tsx', 'test/check.ts'], { cwd: copy, timeout: 60_000, env: { ...process.env, NODE_OPTIONS: '' } }, (error, stdout, stderr) => {
          if (error) reject(new Error(`${error.message}\n${stderr}`));
          else resolve(stdout);
        });
      });
      const result = JSON.parse(output.trim().split('\n').at(-1)!) as Record<string, unknown>;
      assert.equal(result.status, 200, JSON.stringify(result.body));
      assert.equal((result.body as { toy: string }).toy, 'toy');
      assert.equal(result.unkeyed, 401, 'admitted by the pipeline like every keyed route');
      assert.ok((result.keyedRoutes as string[]).includes('/v1/toy'), 'among the keyed routes');
      assert.deepEqual([...(result.keyedRoutes as string[])].sort(), [...(result.examples as string[])].sort(), 'the security suite has an example of every keyed route');
      const operation = result.operation as { security: object[]; responses: Record<string, { content?: Record<string, { schema: unknown }> }> } | null;
      assert.ok(operation, '/v1/toy is in the OpenAPI document');
      assert.deepEqual(operation.security, [{ apiKey: [] }]);
      assert.deepEqual(operation.responses['200']!.content!['application/json']!.schema, { $ref: '#/components/schemas/ToyResponse' });
      assert.ok(result.schema, 'its schema is a component of the document');
    } finally {
      dir.cleanup();
    }
  });
});

/**
 * Every keyed endpoint goes through the one pipeline (src/http/pipeline/):
 * admission and the per-request finish are reached from there alone, every
 * route that asks for a key was registered from an endpoint descriptor, and a
 * route that asks for one any other way is refused when it is added.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { startHarness, type Harness } from '../support/harness.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Every TypeScript file under src/, as [path from the root, text]. */
function sources(): [string, string][] {
  const files: [string, string][] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts')) files.push([relative(ROOT, path), readFileSync(path, 'utf8')]);
    }
  };
  walk(join(ROOT, 'src'));
  return files;
}

/** The files that import `module` (a path under src/ ending in .js), by any relative spelling. */
function importersOf(module: string): string[] {
  const name = module.split('/').pop()!.replace('.', '\\.');
  return sources()
    .filter(([path, text]) => {
      const pattern = new RegExp(`from '((?:\\.\\.?/)+[\\w/.-]*?)${name}'`, 'g');
      for (const match of text.matchAll(pattern)) {
        const target = relative(ROOT, join(ROOT, path, '..', match[1]!, module.split('/').pop()!));
        if (target === join('src', module).replace(/\.js$/, '.js')) return true;
      }
      return false;
    })
    .map(([path]) => path)
    .sort();
}

describe('one pipeline for every keyed endpoint', () => {
  it('admission is called from the pipeline alone', () => {
    assert.deepEqual(importersOf('access/admission.js'), ['src/http/pipeline/keyed.ts']);
    const callers = sources().filter(([, text]) => /\badmit\(/.test(text)).map(([path]) => path);
    assert.deepEqual(callers.sort(), ['src/access/admission.ts', 'src/http/pipeline/keyed.ts'].sort());
  });

  it('the finish (meter, metrics, log line) is written once, and reached from the pipeline alone', () => {
    assert.deepEqual(importersOf('http/pipeline/finish.js'), ['src/http/pipeline/fastify.ts', 'src/http/pipeline/keyed.ts']);
    // Nothing else meters a request or counts it in the request metrics.
    // (connection-errors.ts counts the requests Node could not parse, refused on the bare socket: no route, no key, no request to finish.)
    const metering = sources().filter(([, text]) => /\.meter\.record\(|\.metrics\.observe\(/.test(text));
    assert.deepEqual(metering.map(([path]) => path).sort(), ['src/http/connection-errors.ts', 'src/http/pipeline/finish.ts']);
  });

  it('src/http imports no module that leads back to itself (type-only imports included)', () => {
    const files = new Map(sources().filter(([path]) => path.startsWith(join('src', 'http'))));
    const edges = new Map<string, string[]>();
    for (const [path, text] of files) {
      const targets = [...text.matchAll(/from '(\.\.?\/[^']+)\.js'/g)].map((match) => relative(ROOT, join(ROOT, path, '..', `${match[1]}.ts`)));
      edges.set(path, targets.filter((target) => files.has(target)));
    }
    const done = new Set<string>();
    const visit = (path: string, trail: string[]): void => {
      if (trail.includes(path)) assert.fail(`import cycle: ${[...trail.slice(trail.indexOf(path)), path].join(' → ')}`);
      if (done.has(path)) return;
      for (const target of edges.get(path)!) visit(target, [...trail, path]);
      done.add(path);
    };
    for (const path of files.keys()) visit(path, []);
  });

  describe('routes', () => {
    let harness: Harness;
    before(async () => {
      harness = await startHarness();
    });
    after(() => harness.close());

    // First, while routes may still be added (the first request readies the app).
    it('a route that asks for a key any other way is refused when it is added', () => {
      assert.throws(
        () => harness.app.get('/v1/rogue', { schema: { security: [{ apiKey: [] }] } }, async () => 'answered without admission'),
        /no endpoint descriptor/,
      );
    });

    it('every route that asks for a key was registered from a descriptor, and every /v1, /webservice and /compat route asks for one', async () => {
      const document = JSON.parse((await harness.app.inject({ url: '/openapi.json' })).body) as { paths: Record<string, { get?: { security?: object[] } }> };
      const asking = Object.entries(document.paths)
        .filter(([, item]) => item.get?.security?.some((requirement) => 'apiKey' in requirement))
        .map(([path]) => path.replace(/\{(\w+)\}/g, ':$1'))
        .sort();
      const registered = harness.app.keyedRoutes.map((route) => route.url).sort();
      assert.deepEqual(asking, registered);
      const api = Object.keys(document.paths)
        .filter((path) => path.startsWith('/v1/') || path === '/v1' || path.startsWith('/webservice/') || path.startsWith('/compat/'))
        .map((path) => path.replace(/\{(\w+)\}/g, ':$1'))
        .sort();
      assert.deepEqual(api, registered, 'an API route outside the pipeline');
    });
  });
});

/**
 * Fault: hostile documents from a real upstream on 127.0.0.1, read by the
 * real `nerkh serve` process, which parses them in worker threads. Each
 * source's documents are good until the test turns them hostile:
 *
 * - a mapping whose `match()` filter backtracks catastrophically on thirty
 *   characters of the feed (minutes of work): stopped at its 1 s
 *   `timeout_seconds`, with that reason;
 * - an ECB document with an external entity, and one nested 10,000 tags
 *   deep: refused as invalid XML with the parser's reason, never as a
 *   failed request.
 *
 * Meanwhile `/healthz` keeps answering (a generous bound, which only a held
 * event loop breaks: the filter alone held it 14 s when parsed there), each
 * source's last good value is still served from it, and the process never
 * exits.
 *
 * Needs `npm run build` first. Run alone: node --import tsx --test test/fault/source-parse-limits.test.ts
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { tempDir } from '../support/env.js';
import { assertBuilt, cleanEnv, cliOk, get, pollUntil, startServer, type ServerProcess } from '../e2e/helpers.js';
import { ecbXml } from './format-fixtures.js';

interface SourceStatus {
  name: string;
  state: string;
  error: string | null;
}
interface Rate {
  key: string;
  value: string;
  source: string | null;
}

/**
 * A /healthz that takes longer than this means the event loop was held: far below what the hostile
 * documents would hold it for if parsed on it (seconds each), far above a busy machine's pauses.
 */
const HELD_MS = 5000;

describe('fault: hostile documents parsed in worker threads by a real nerkh serve', () => {
  const dir = tempDir('nerkh-fault-parse-');
  // A weekday two days back: the reference date is well past its publication whatever the hour here.
  const ecbDate = new Date(Date.now() - 2 * 86_400_000).toISOString().slice(0, 10);
  const goodEcb = ecbXml(ecbDate, { USD: '1.0240', JPY: '160.04', GBP: '0.8512' });
  const documents: Record<string, { type: string; good: string; hostile: string }> = {
    '/regex': {
      type: 'application/json',
      good: JSON.stringify({ data: [{ symbol: 'aaaa', sell: '1.0823' }] }),
      hostile: JSON.stringify({ data: [{ symbol: `${'a'.repeat(29)}!`, sell: '1.0823' }] }),
    },
    '/entity': {
      type: 'text/xml',
      good: goodEcb,
      hostile: goodEcb.replace('<gesmes:Envelope', '<!DOCTYPE e [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n<gesmes:Envelope').replace("rate='160.04'", "rate='&x;'"),
    },
    '/deep': {
      type: 'text/xml',
      good: goodEcb,
      hostile: goodEcb.replace('</gesmes:Envelope>', `${'<a>'.repeat(10_000)}${'</a>'.repeat(10_000)}</gesmes:Envelope>`),
    },
  };
  let hostile = false;
  const hostileReads = new Map<string, number>();
  let upstream: Server | null = null;
  let server: ServerProcess | null = null;
  let apiKey = '';

  before(async () => {
    assertBuilt();
    upstream = createServer((request, response) => {
      const path = request.url ?? '/';
      const document = documents[path];
      if (!document) {
        response.writeHead(404).end();
        return;
      }
      if (hostile) hostileReads.set(path, (hostileReads.get(path) ?? 0) + 1);
      response.writeHead(200, { 'content-type': document.type });
      response.end(hostile ? document.hostile : document.good);
    });
    await new Promise<void>((resolve) => upstream!.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    const polled = { type: 'http', poll_seconds: 0.5, max_backoff_seconds: 1, timeout_seconds: 1 } as const;
    const configPath = join(dir.path, 'nerkh.config.json');
    writeFileSync(
      configPath,
      JSON.stringify({
        sources: [
          { name: 'regex', ...polled, url: `${base}/regex`, format: 'mapping', max_age_seconds: 600, items: { intl_fx_eurusd: "$.data[?match(@.symbol, '(a+)+')].sell" } },
          { name: 'entity', ...polled, url: `${base}/entity`, format: 'ecb', max_age_seconds: 5 * 86_400, items: { intl_fx_usdjpy: 'JPY/USD' } },
          { name: 'deep', ...polled, url: `${base}/deep`, format: 'ecb', max_age_seconds: 5 * 86_400, items: { intl_fx_gbpusd: 'USD/GBP' } },
        ],
      }),
    );
    const env = { NERKH_HOST: '127.0.0.1', NERKH_DATA_DIR: join(dir.path, 'data'), NERKH_CONFIG: configPath, NERKH_LOG_LEVEL: 'warn' };
    server = await startServer(env);
    await cliOk(cleanEnv(env), ['accounts', 'add', 'parse-limits', '--plan', 'enterprise']);
    apiKey = (JSON.parse((await cliOk(cleanEnv(env), ['keys', 'issue', 'parse-limits', '--json'])).stdout) as { key: string }).key;
  });

  after(async () => {
    if (server) {
      await server.kill();
      if (server.stderr.trim()) console.error(`nerkh serve (parse limits) stderr:\n${server.stderr.slice(-3000)}`);
    }
    await new Promise<void>((resolve) => (upstream ? upstream.close(() => resolve()) : resolve()));
    dir.cleanup();
  });

  it('stops the backtracking filter at its timeout and refuses the hostile XML with the parser’s reason, keeping the last good values and answering throughout', async () => {
    const sources = async () => {
      const response = await get(server!.base, '/v1/status', apiKey, 10_000);
      assert.equal(response.status, 200, response.text.slice(0, 300));
      return new Map((response.json as { sources: SourceStatus[] }).sources.map((source) => [source.name, source]));
    };
    await pollUntil(sources, (all) => [...all.values()].every((source) => source.state === 'active'), 15_000, 200, (all) => JSON.stringify([...all.values()]));
    hostile = true;
    // /healthz probed back to back while the hostile documents are read.
    let probing = true;
    let slowest = 0;
    const prober = (async () => {
      while (probing) {
        const sent = performance.now();
        const response = await get(server!.base, '/healthz', undefined, 30_000);
        assert.equal(response.status, 200);
        slowest = Math.max(slowest, performance.now() - sent);
      }
    })();
    const expected = {
      regex: 'parse took longer than 1 s (timeout_seconds)',
      entity: 'invalid XML: External entities are not supported',
      deep: 'invalid XML: Maximum nested tags exceeded',
    };
    try {
      await pollUntil(
        sources,
        (all) => Object.entries(expected).every(([name, error]) => all.get(name)?.error === error && all.get(name)?.state === 'degraded'),
        30_000,
        200,
        (all) => JSON.stringify([...all.values()]),
      );
    } finally {
      probing = false;
      await prober;
    }
    assert.ok(slowest < HELD_MS, `a /healthz took ${Math.round(slowest)} ms while the hostile documents were parsed`);
    assert.ok((hostileReads.get('/regex') ?? 0) >= 1, 'the backtracking document was read');

    // Each source's last good value is still served from it.
    const detail = await get(server!.base, '/v1/rates/fx_eurusd,fx_usdjpy,fx_gbpusd', apiKey);
    assert.equal(detail.status, 200, detail.text.slice(0, 300));
    const rates = (detail.json as { rates: Rate[] }).rates.map((rate) => [rate.key, String(rate.value), rate.source]);
    assert.deepEqual(rates, [
      ['fx_eurusd', '1.0823', 'regex'],
      ['fx_usdjpy', '156.289062', 'entity'],
      ['fx_gbpusd', '1.203008', 'deep'],
    ]);
    // The public page says which kind of failure in fixed words, never that a request failed.
    const page = await get(server!.base, '/status');
    assert.ok(page.text.includes('document took too long to parse'), 'the public page names the parse deadline');
    assert.ok(!page.text.includes('request failed') && !page.text.includes('source unreachable'), 'no parse failure is shown as a network failure');
    assert.ok(server!.running, server!.output());
  });
});

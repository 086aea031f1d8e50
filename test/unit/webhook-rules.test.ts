import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { describe, it } from 'node:test';
import { buildPlans, applyOverrides } from '../../src/domain/plan.js';
import { checkWebhookUrl, isPrivate, webhookUrlRefusal } from '../../src/webhooks/address.js';
import { postWebhook } from '../../src/webhooks/post.js';
import { nextAttemptAt, webhookTimings } from '../../src/webhooks/schedule.js';

describe('webhook addresses (the SSRF rule)', () => {
  it('public https:// only, unless allow_private; then private and loopback addresses, over http:// too', () => {
    assert.equal(webhookUrlRefusal('https://8.8.8.8/hook', false), null);
    assert.equal(webhookUrlRefusal('https://hooks.example.com/x?y=1', false), null, 'a name is resolved later');
    for (const url of ['https://127.0.0.1/', 'https://10.1.2.3/', 'https://[::1]/', 'https://169.254.169.254/latest', 'https://[fd00::1]/', 'https://0.0.0.0/', 'https://[::ffff:127.0.0.1]/', 'https://192.168.1.1/', 'https://100.64.0.1/']) {
      assert.match(webhookUrlRefusal(url, false) ?? '', /private or loopback address \(allowed only with "webhooks": \{"allow_private": true\}\)/, url);
      assert.equal(webhookUrlRefusal(url, true), null, url);
    }
    assert.match(webhookUrlRefusal('http://8.8.8.8/', false)!, /only https:\/\//);
    assert.match(webhookUrlRefusal('http://8.8.8.8/', true)!, /public address, and plain http:\/\/ is allowed only to a private or loopback one/);
    assert.equal(webhookUrlRefusal('http://127.0.0.1:9/', true), null);
    assert.match(webhookUrlRefusal('ftp://127.0.0.1/', true)!, /only https:\/\/ addresses are allowed \(got ftp:\/\/\)/);
    assert.match(webhookUrlRefusal('https://user:pw@8.8.8.8/', false)!, /user name or password/);
    assert.match(webhookUrlRefusal('not a url', false)!, /not a valid URL/);
    assert.equal(isPrivate('1.1.1.1'), false);
    assert.equal(isPrivate('2606:4700:4700::1111'), false);
  });

  it('resolves a name when the endpoint is added: localhost is loopback', async () => {
    assert.match((await checkWebhookUrl('https://localhost:1/x', false))!, /^localhost resolves to (127\.0\.0\.1|::1), a private or loopback address/);
    assert.equal(await checkWebhookUrl('http://localhost:1/x', true), null);
  });

  it('checks the addresses again at delivery: a name resolving to loopback is refused before any connection', async () => {
    let reached = 0;
    const server = createServer((_request, response) => {
      reached++;
      response.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    try {
      const refused = await postWebhook(`https://localhost:${port}/x`, {}, '{}', { timeoutMs: 2000, allowPrivate: false });
      assert.equal(refused.status, null);
      assert.match(refused.error!, /^address refused: localhost resolves to 127\.0\.0\.1, a private or loopback address/);
      const literal = await postWebhook(`http://127.0.0.1:${port}/x`, {}, '{}', { timeoutMs: 2000, allowPrivate: false });
      assert.match(literal.error!, /^address refused: only https:\/\//);
      assert.equal(reached, 0, 'nothing reached the server');
      const allowed = await postWebhook(`http://localhost:${port}/x`, {}, '{}', { timeoutMs: 2000, allowPrivate: true });
      assert.equal(allowed.status, 200);
      assert.equal(reached, 1);
    } finally {
      server.close();
    }
  });
});

describe('webhook schedule', () => {
  it('retries after about 5 s, 30 s, 2 min, 10 min, 1 h, then hourly, for 24 h', () => {
    const timings = webhookTimings();
    assert.deepEqual([1, 2, 3, 4, 5, 6, 7, 30].map(timings.retryDelayMs), [5_000, 30_000, 120_000, 600_000, 3_600_000, 3_600_000, 3_600_000, 3_600_000]);
    const hour = 3_600_000;
    // Attempt times from an event at 0: 0, 5 s, 35 s, 2:35, 12:35, then each hour on: the last one inside 24 h.
    let now = 0;
    const attempts = [0];
    for (let failed = 1; ; failed++) {
      const next = nextAttemptAt(timings, 0, failed, now);
      if (next === null) break;
      attempts.push((now = next));
    }
    assert.deepEqual(attempts.slice(0, 6), [0, 5_000, 35_000, 155_000, 755_000, 4_355_000]);
    assert.ok(attempts.at(-1)! <= 24 * hour && attempts.at(-1)! > 23 * hour, String(attempts.at(-1)));
    assert.equal(attempts.length, 28);
    assert.equal(timings.disableAfterMs, 72 * hour);
    assert.equal(timings.staleAfterMs, 300_000);
    assert.equal(timings.timeoutMs, 10_000);
    const scaled = webhookTimings(0.001);
    assert.deepEqual([scaled.retryDelayMs(1), scaled.retryWindowMs, scaled.staleAfterMs, scaled.timeoutMs], [5, 86_400, 300, 10_000], 'the test scale shrinks all but the timeout');
  });
});

describe('plan field max_webhooks', () => {
  it('basic 0, pro 5, enterprise 50; a custom plan listing alerts gets pro’s figure unless it sets one', () => {
    const plans = buildPlans(['usd_free'], { hooks: { services: ['detail', 'alerts'] }, few: { services: ['alerts'], max_webhooks: 2 } });
    assert.deepEqual(['basic', 'pro', 'enterprise', 'hooks', 'few'].map((name) => [plans.get(name)!.max_webhooks, plans.get(name)!.services.includes('alerts')]), [
      [0, false],
      [5, true],
      [50, true],
      [5, true],
      [2, true],
    ]);
    assert.equal(applyOverrides(plans.get('basic')!, { services: ['detail', 'alerts'] }).max_webhooks, 5);
    assert.equal(applyOverrides(plans.get('basic')!, { services: ['alerts'], max_webhooks: 1 }).max_webhooks, 1);
  });
});

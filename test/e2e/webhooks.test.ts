/**
 * Webhooks end to end, one real `nerkh serve` on SQLite and the real CLI,
 * fed by a file source this test writes, delivering to a receiver on
 * 127.0.0.1 that verifies every signature with the Standard Webhooks
 * library: the CLI's refusals, a crossing delivered once and again only after
 * re-arming, retries after three 500s under the same webhook-id, stale and
 * recovered, and a delivery left pending by a SIGKILL sent after the restart.
 * Durations run at NERKH_WEBHOOK_TIME_SCALE=0.01 (5 s of back-off is 50 ms,
 * the 5 minutes before `stale` are 3 s).
 *
 * Needs `npm run build` first. Run alone: node --import tsx --test test/e2e/webhooks.test.ts
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { tempDir, writeRaw } from '../support/env.js';
import { assertBuilt, cliOk, get, pollUntil, runCli, startServer, type ServerProcess } from './helpers.js';
import { webhookMarks } from './webhook-marks.js';
import { WebhookReceiver, type Received } from './webhook-receiver.js';

assertBuilt();

interface Added {
  id: string;
  secret: string;
}

describe('webhooks with a real nerkh serve and CLI', () => {
  const dir = tempDir('nerkh-hooks-e2e-');
  const sourcePath = join(dir.path, 'alpha.json');
  const configPath = join(dir.path, 'nerkh.config.json');
  const strictConfigPath = join(dir.path, 'strict.config.json');
  const receiver = new WebhookReceiver();
  let server: ServerProcess;
  let usd = '1000000';
  let feeder: NodeJS.Timeout | null = null;

  const env = (config = configPath): Record<string, string> => ({
    NERKH_CONFIG: config,
    NERKH_DATA_DIR: join(dir.path, 'var'),
    NERKH_LOG_LEVEL: 'warn',
    NERKH_WEBHOOK_TIME_SCALE: '0.01',
  });
  const cliEnv = (config = configPath) => ({ ...process.env, ...env(config) });
  const cli = (...args: string[]) => cliOk(cliEnv(), args);
  const refused = async (args: string[], pattern: RegExp, config = configPath) => {
    const result = await runCli(cliEnv(config), args);
    assert.equal(result.code, 1, `nerkh ${args.join(' ')} should be refused\n${result.stdout}${result.stderr}`);
    assert.match(result.stderr, pattern);
    assert.equal(result.stdout, '');
  };
  /** The value as the source writes it (number text, exactly), kept fresh every 0.5 s while the feeder runs. */
  const write = (value: string) => {
    usd = value;
    writeRaw(sourcePath, `{"updated_at":"${new Date().toISOString()}","items":{"ir_fx_free_usd":${value}}}`);
  };
  const feed = (on: boolean) => {
    if (feeder) clearInterval(feeder);
    feeder = on ? setInterval(() => write(usd), 500) : null;
  };
  const add = async (username: string, path: string, ...options: string[]): Promise<Added> => {
    const { stdout } = await cli('webhooks', 'add', username, receiver.url(path), ...options, '--json');
    const added = JSON.parse(stdout) as Added;
    receiver.expect(path, added.secret);
    return added;
  };
  const verified = (requests: Received[]) => {
    for (const request of requests) assert.equal(request.verifyError, null, `${request.path} ${request.id}: ${request.verifyError}`);
    return requests;
  };
  const waitFor = (path: string, count: number, timeoutMs = 8000) => pollUntil(async () => receiver.on(path), (list) => list.length >= count, timeoutMs, 50, (list) => JSON.stringify(list.map((r) => [r.id, r.answered, r.event?.type])));
  /** The marker endpoint's rules: each fires on the snapshot a check needs (webhook-marks.ts). */
  const MARK = { below: 'usd_free<1000500', above: 'usd_free>1000650', higher: 'usd_free>1000805', lowest: 'usd_free<998500' };
  const { marked, drained } = webhookMarks(receiver, '/mark', cli);

  before(async () => {
    await receiver.start();
    const sources = [{ name: 'alpha', type: 'file', path: sourcePath, max_age_seconds: 3, poll_seconds: 0.2 }];
    const plans = { small: { services: ['detail', 'alerts'], max_webhooks: 1 } };
    writeFileSync(configPath, JSON.stringify({ sources, plans, webhooks: { allow_private: true } }));
    writeFileSync(strictConfigPath, JSON.stringify({ sources, plans }));
    write(usd);
    feed(true);
    server = await startServer(env());
    await cli('accounts', 'add', 'alice', '--plan', 'pro');
    await cli('accounts', 'add', 'bob', '--plan', 'basic');
    await cli('accounts', 'add', 'sam', '--plan', 'small');
    await cli('accounts', 'add', 'mark', '--plan', 'pro');
  });

  after(async () => {
    feed(false);
    await server?.kill();
    await receiver.close();
    dir.cleanup();
  });

  it('refuses a plan without alerts, more endpoints than max_webhooks, a bad rule (naming it), an unknown event and a URL the SSRF rule forbids', async () => {
    const url = receiver.url('/never');
    await refused(['webhooks', 'add', 'bob', url, '--rule', 'usd_free>1'], /^nerkh: account "bob" is on plan "basic", which has no alerts service \(webhooks need it\)$/m);
    await refused(['webhooks', 'add', 'alice', url, '--rule', 'usd_free>1', '--rule', 'usd_free>>1'], /^nerkh: invalid alert rule "usd_free>>1": ">1" is not a decimal number/m);
    await refused(['webhooks', 'add', 'alice', url, '--rule', 'gold_99k<5'], /^nerkh: invalid alert rule "gold_99k<5": unknown reference "gold_99k"$/m);
    await refused(['webhooks', 'add', 'alice', url, '--on', 'stale,late'], /^nerkh: unknown event "late" \(events: stale, recovered\)$/m);
    await refused(['webhooks', 'add', 'alice', url], /at least one --rule or --on/);
    await refused(['webhooks', 'add', 'alice', receiver.url('/x'), '--rule', 'usd_free>1'], /^nerkh: refused URL "http:\/\/127\.0\.0\.1:\d+\/x": only https:\/\//m, strictConfigPath);
    await refused(['webhooks', 'add', 'alice', 'https://127.0.0.1/x', '--rule', 'usd_free>1'], /127\.0\.0\.1 is a private or loopback address \(allowed only with "webhooks": \{"allow_private": true\}\)/, strictConfigPath);
    await refused(['webhooks', 'add', 'alice', 'https://localhost/x', '--rule', 'usd_free>1'], /localhost resolves to [\d.:]+, a private or loopback address/, strictConfigPath);
    await refused(['webhooks', 'add', 'alice', 'https://169.254.169.254/latest/meta-data', '--rule', 'usd_free>1'], /169\.254\.169\.254 is a private or loopback address/, strictConfigPath);
    // A reference the account may not read.
    await cli('accounts', 'set', 'sam', '--references', 'usd_free');
    await refused(['webhooks', 'add', 'sam', url, '--rule', 'eur_free>1'], /^nerkh: invalid alert rule "eur_free>1": reference "eur_free" is not among the references account "sam" may read$/m);
    await add('sam', '/sam', '--rule', 'usd_free>99999999');
    await refused(['webhooks', 'add', 'sam', url, '--rule', 'usd_free>1'], /^nerkh: account "sam" has 1 webhook endpoint; its plan allows 1$/m);
    assert.equal(receiver.received.length, 0);
  });

  let ok: Added;
  it('a crossing is delivered once, signed; not again until the rule was false', async (t) => {
    const { stdout } = await cli('webhooks', 'add', 'alice', receiver.url('/ok'), '--rule', 'usd_free>1000500', '--on', 'stale,recovered');
    const [, id] = /^webhook (wh_[0-9a-f]+) added for alice: http:\/\/127\.0\.0\.1:\d+\/ok$/m.exec(stdout) ?? [];
    const secret = /^whsec_[A-Za-z0-9+/]+=*$/m.exec(stdout)?.[0];
    assert.ok(id && secret, stdout);
    ok = { id, secret };
    receiver.expect('/ok', secret);
    // Added after /ok: once the marker fires on 1000000, /ok was loaded and evaluated below its threshold.
    await add('mark', '/mark', ...Object.values(MARK).flatMap((rule) => ['--rule', rule]));
    await marked(MARK.below, 1000000);
    assert.deepEqual(receiver.on('/ok'), [], 'below the threshold: nothing');

    const crossed = Date.now();
    write('1000600.50');
    const { value } = await waitFor('/ok', 1, 5000);
    const [alert] = verified(value);
    t.diagnostic(`delivered ${alert!.at - crossed} ms after the crossing`);
    assert.match(alert!.id, /^msg_[A-Za-z0-9_-]{22}$/);
    assert.equal(alert!.event?.type, 'rate.alert');
    assert.deepEqual({ ...alert!.event!.data, at: undefined, change_percent: undefined }, { rule: 'usd_free>1000500', key: 'usd_free', value: 1000600.5, at: undefined, change_percent: undefined });
    assert.match(alert!.body, /"value":1000600\.50,/, 'the source’s number text, exactly');
    assert.match(String(alert!.event!.data.at), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+03:30$/);

    write('1000700');
    await marked(MARK.above, 1000700);
    write('1000400');
    await marked(MARK.below, 1000400);
    await drained('alice', '/ok');
    assert.equal(receiver.on('/ok').length, 1, 'still true, then false: no delivery');
    write('1000800');
    const second = verified((await waitFor('/ok', 2, 5000)).value);
    assert.notEqual(second[1]!.id, second[0]!.id, 'a new crossing is a new delivery');
    assert.equal(second[1]!.event?.data.value, 1000800);
    // A later snapshot on which /ok's rule still holds, evaluated and sent: no second delivery for 1000800.
    write('1000810');
    await marked(MARK.higher, 1000810);
    await drained('alice', '/ok');
    assert.equal(receiver.on('/ok').length, 2, 'no second delivery for 1000800');
  });

  it('an endpoint answering 500 three times gets the delivery later under the same webhook-id, on the back-off schedule', async () => {
    const flaky = await add('alice', '/flaky', '--rule', 'usd_free>1000900');
    receiver.script('/flaky', [500, 500, 500]);
    write('1000950');
    const attempts = verified((await waitFor('/flaky', 4, 15_000)).value);
    assert.deepEqual(attempts.map((a) => a.answered), [500, 500, 500, 200]);
    assert.equal(new Set(attempts.map((a) => a.id)).size, 1, 'one webhook-id for every attempt');
    // About 5 s, 30 s and 2 min between attempts, scaled by 0.01 (never sooner; the sender's poll may add some).
    const gaps = attempts.slice(1).map((a, i) => a.at - attempts[i]!.at);
    assert.ok(gaps[0]! >= 40 && gaps[1]! >= 250 && gaps[2]! >= 1000, `gaps ${gaps.join(', ')} ms`);
    // The log folds a minute's attempts of one outcome into one line with a count (the latest attempt's details).
    type Line = { endpoint: string; delivery: string; attempt: number; status_code: number | null; outcome: string; count: number };
    // The 200 is recorded once the sender has its answer: wait for that line (the delivery then leaves the outbox).
    const { value: log } = await pollUntil(
      async () => JSON.parse((await cli('webhooks', 'log', 'alice', '--json')).stdout) as Line[],
      (lines) => lines.some((line) => line.endpoint === flaky.id && line.outcome === 'delivered'),
      8000,
      100,
    );
    assert.equal(receiver.on('/flaky').length, 4, 'delivered: no more attempts');
    const lines = log.filter((line) => line.endpoint === flaky.id);
    const counted = (outcome: string) => lines.filter((line) => line.outcome === outcome).reduce((sum, line) => sum + line.count, 0);
    assert.deepEqual([counted('retrying'), counted('delivered')], [3, 1], JSON.stringify(lines));
    assert.deepEqual([lines[0]!.delivery, lines[0]!.attempt, lines[0]!.status_code, lines[0]!.outcome], [attempts[0]!.id, 4, 200, 'delivered']);
    assert.ok(lines.every((line) => line.delivery === attempts[0]!.id && (line.outcome === 'delivered' || line.status_code === 500)), JSON.stringify(lines));
    assert.equal(receiver.on('/ok').length, 2, 'the other endpoint’s rule still holds: nothing new there');
  });

  it('a reference stale for (scaled) 5 minutes sends rate.stale once, and rate.recovered when it is fresh again', async () => {
    feed(false);
    const staleAt = (await waitFor('/ok', 3, 15_000)).value;
    const stale = verified(staleAt)[2]!;
    assert.equal(stale.event?.type, 'rate.stale');
    assert.equal(stale.event?.data.key, 'usd_free');
    assert.equal(stale.event?.data.value, 1000950);
    assert.ok(typeof stale.event?.data.stale_seconds === 'number' && stale.event.data.stale_seconds >= 3, JSON.stringify(stale.event?.data));
    write('1000960');
    feed(true);
    const recovered = verified((await waitFor('/ok', 4, 5000)).value)[3]!;
    // The recovery is evaluated after every snapshot of the stale spell: a second rate.stale would have come before it.
    assert.deepEqual(receiver.on('/ok').filter((r) => r.event?.type === 'rate.stale').map((r) => r.id), [stale.id], 'stale is sent once');
    assert.equal(recovered.event?.type, 'rate.recovered');
    assert.equal(recovered.event?.data.value, 1000960);
    assert.equal(recovered.event?.data.stale_since, stale.event?.data.stale_since);
    assert.equal(receiver.on('/flaky').length, 4, 'an endpoint without --on gets neither');
  });

  it('SIGKILL of the sender with a delivery pending: after the restart it is delivered under the same id, and the crossing is not queued again', async () => {
    await add('alice', '/hold', '--rule', 'usd_free<1000000');
    receiver.fixedStatus('/hold', 503);
    write('999000');
    const first = verified((await waitFor('/hold', 1, 5000)).value)[0]!;
    assert.equal(first.answered, 503);
    await server.stop('SIGKILL');
    receiver.fixedStatus('/hold', null);
    server = await startServer(env());
    const all = verified((await waitFor('/hold', 2, 15_000)).value);
    assert.equal(all.at(-1)!.answered, 200);
    assert.deepEqual([...new Set(all.map((r) => r.id))], [first.id], 'the same delivery, nothing new');
    // A crossing of the marker's on a snapshot after the restart, while /hold's rule still holds: the restarted
    // producer has evaluated /hold with the states it loaded, and its sender has gone past the pending delivery.
    write('998000');
    await marked(MARK.lowest, 998000);
    await drained('alice', '/hold');
    const after = receiver.on('/hold');
    assert.equal(after.filter((r) => r.answered === 200).length, 1, 'delivered once');
    assert.deepEqual([...new Set(after.map((r) => r.id))], [first.id], 'the rule that still holds after the restart is not fired again');
  });

  it('GET /v1/webhooks shows the account its endpoints (no secret) and log; list and remove work; a plan without alerts gets 403', async () => {
    const key = (JSON.parse((await cli('keys', 'issue', 'alice', '--json')).stdout) as { key: string }).key;
    const bobKey = (JSON.parse((await cli('keys', 'issue', 'bob', '--json')).stdout) as { key: string }).key;
    const answer = await pollUntil(() => get(server.base, '/v1/webhooks', key), (r) => r.status === 200, 5000);
    const body = answer.value.json as { account: string; endpoints: { id: string; url: string; state: string }[]; deliveries: { delivery: string | null; outcome: string; status_code: number | null }[] };
    assert.equal(body.account, 'alice');
    assert.equal(body.endpoints.length, 3);
    assert.equal(body.endpoints[0]!.id, ok.id);
    assert.ok(!answer.value.text.includes('whsec_'), 'no secret in the answer');
    assert.ok(body.deliveries.some((line) => line.outcome === 'delivered' && line.status_code === 200), 'body.deliveries.some((line) => line.outcome === \'delivered\' && line.status_code === 200)');
    assert.equal(answer.value.headers.get('cache-control'), 'private, no-cache');
    // A key issued a moment ago works once the server's directory has reloaded (within a second).
    const { value: denied } = await pollUntil(() => get(server.base, '/v1/webhooks', bobKey), (r) => r.status !== 401, 5000);
    assert.equal(denied.status, 403);
    assert.equal((denied.json as { error: string }).error, 'SERVICE_NOT_ACTIVE');
    assert.equal((await get(server.base, '/v1/webhooks?x=1', key)).status, 400);

    const listed = (await cli('webhooks', 'list', 'alice')).stdout;
    assert.match(listed, new RegExp(`^${ok.id}\\s+enabled\\s+http://127\\.0\\.0\\.1:\\d+/ok\\s+usd_free>1000500\\s+stale,recovered`, 'm'));
    assert.doesNotMatch(listed, /whsec_/);
    await cli('webhooks', 'remove', 'alice', ok.id);
    await refused(['webhooks', 'remove', 'alice', ok.id], /^nerkh: account "alice" has no webhook endpoint "wh_[0-9a-f]+"$/m);
    assert.equal((JSON.parse((await cli('webhooks', 'list', 'alice', '--json')).stdout) as unknown[]).length, 2);
    assert.match((await cli('webhooks', 'log', 'alice')).stdout, /^at\s+endpoint\s+delivery\s+type\s+attempt\s+outcome\s+count\s+result\s+ms$/m);
  });
});

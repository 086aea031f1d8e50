/**
 * The shipped proxy config (deploy/haproxy.cfg) logs no key:
 * Debian's HAProxy runs that very file, its listener and servers pointed at
 * a real Nerkh on 127.0.0.1, and gets keys in the query (the stream's
 * `?api_key=`, any encoding) and in the path. Its log lines keep the
 * method, the path and the request id that leads to the node's own line;
 * no key, in any encoding. A missing /usr/sbin/haproxy fails loudly
 * (apt-get install -y haproxy).
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { decodeLoosely } from '../../src/domain/redact.js';
import { tempDir } from '../support/env.js';
import { startHarness, type Harness } from '../support/harness.js';
import { startShippedProxy, type ShippedProxy } from '../support/haproxy.js';
import { sleep } from './helpers.js';

/** Generous: on a machine running other suites beside this one, the proxy and the node may each wait for a core. */
const ANSWER_MS = 20_000;

interface Answer {
  status: number;
  requestId: string;
}

/** One GET through the proxy with the path exactly as given; a stream's first bytes are its answer. */
function get(port: number, path: string, key?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: '127.0.0.1', port, path, headers: key ? { 'x-api-key': key } : {}, timeout: ANSWER_MS }, (response) => {
      const done = () => resolve({ status: response.statusCode!, requestId: String(response.headers['x-request-id']) });
      if (String(response.headers['content-type']).startsWith('text/event-stream')) {
        response.once('data', () => {
          done();
          outgoing.destroy();
        });
      } else response.resume().on('end', done);
    });
    outgoing.on('timeout', () => outgoing.destroy(new Error(`no answer to ${path} within ${ANSWER_MS / 1000} s`)));
    outgoing.on('error', reject).end();
  });
}

describe('the shipped HAProxy config logs no key', { timeout: 180_000 }, () => {
  const tmp = tempDir('nerkh-proxy-');
  let harness: Harness;
  let proxy: ShippedProxy;
  let proxyPort: number;
  let key: string;

  before(async () => {
    // Pings five times a second: HAProxy logs a stream when a write finds its client gone.
    harness = await startHarness({ runtime: { stream: { pingMs: 200 } } });
    const nodeAddress = await harness.app.listen({ port: 0, host: '127.0.0.1' });
    ({ key } = await harness.keyFor('proxy-user', 'enterprise'));
    proxy = await startShippedProxy(Number(new URL(nodeAddress).port), tmp.path);
    proxyPort = proxy.port;
  });

  after(async () => {
    await proxy?.stop();
    await harness?.close();
    tmp.cleanup();
  });

  it('keeps method, path and request id of every request, and no key in any encoding', async () => {
    const tail = key.slice('nrk_'.length);
    const sent: { path: string; answer: Answer; logged: string }[] = [];
    const send = async (path: string, logged: string, header?: string) => sent.push({ path, answer: await get(proxyPort, path, header), logged });
    await send(`/v1/stream?keys=usd_free&api_key=${key}`, '/v1/stream');
    await send(`/v1/stream?keys=usd_free&api%5Fkey=nrk%5F${tail}`, '/v1/stream');
    await send(`/v1/rates/usd_free?api_key=${key}`, '/v1/rates/usd_free', key);
    await send(`/board?api_key=${key}`, '/board');
    await send(`/v1/rates/${key}`, '<redacted>', key);
    await send(`/v1/rates/usd_free,%6Erk_${tail}`, '<redacted>', key);
    await send(`/v1/rates/usd_free,NRK%255F${tail}`, '<redacted>', key);
    await send('/v1/rates/usd_free,coin_emami', '/v1/rates/usd_free,coin_emami', key);
    const statuses = sent.map(({ path, answer }) => `${answer.status} ${path}`).join('\n');
    assert.equal(sent[0]!.answer.status, 200, `the stream opened through the proxy:\n${statuses}\n${proxy.output()}`);
    assert.equal(sent[7]!.answer.status, 200, `${statuses}\n${proxy.output()}`);

    // A line is written when its request ends; give the last ones a moment.
    const deadline = Date.now() + ANSWER_MS;
    while (sent.some(({ answer }) => !proxy.output().includes(`{${answer.requestId}}`)) && Date.now() < deadline) await sleep(100);
    const output = proxy.output();
    const lines = output.split('\n');
    for (const { path, answer, logged } of sent) {
      const line = lines.find((candidate) => candidate.includes(`{${answer.requestId}}`));
      assert.ok(line, `a line with the request id of ${path}:\n${output}`);
      assert.ok(line.includes(`"GET ${logged} HTTP/1.1"`), `${path} logged as ${logged}: ${line}`);
      assert.ok(line.includes(` ${answer.status} `), `${path} logged with its status: ${line}`);
    }
    assert.ok(!output.includes(tail) && !decodeLoosely(output).includes(tail), `a key in HAProxy's log:\n${output}`);
  });
});

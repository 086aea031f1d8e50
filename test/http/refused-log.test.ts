/**
 * Refused requests fold in the request log: the fold itself with a clock the
 * test sets (first refusal of a key and status in a second logged, the rest
 * counted into one line when the second is over), and a 429 storm and a
 * storm of unknown keys through the real app at log level info, where every
 * refusal is accounted for by a line or a count and lines stay at most two a
 * second per key and status.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { ManualClock } from '../../src/domain/clock.js';
import { RefusedRequestLog } from '../../src/http/refused-log.js';
import { eventually } from '../support/env.js';
import { startHarness, type Harness } from '../support/harness.js';

type Line = Record<string, unknown>;

describe('refused requests in the request log', () => {
  it('folds refusals per key, status and second: the first logged, the rest one line with a count when the second is over', () => {
    const lines: Line[] = [];
    const log = { info: (details: object) => void lines.push(details as Line) };
    const fold = new RefusedRequestLog();
    const second = 1_800_000_000_000;
    const own = (key: string | null, status: number, at: number) => fold.ownLine(log, key, status, at);
    assert.equal(own('k1', 429, second), true);
    for (let i = 1; i < 500; i++) assert.equal(own('k1', 429, second + (i % 1000)), false);
    assert.equal(own(null, 401, second + 10), true);
    for (let i = 0; i < 99; i++) own(null, 401, second + 20);
    assert.equal(own('k2', 429, second + 30), true, 'another key is its own fold');
    assert.equal(own('k1', 200, second + 40), true, 'answered requests are never folded');
    assert.equal(own('k1', 400, second + 41), true);
    assert.equal(lines.length, 0, 'nothing written within the second');
    // The next second: the folds of the one gone by are written, and its first refusal is logged again.
    assert.equal(own('k1', 429, second + 1000), true);
    assert.deepEqual(
      lines.map((line) => [line.key_id, line.status, line.refused, line.second]),
      [
        ['k1', 429, 499, new Date(second).toISOString()],
        [null, 401, 99, new Date(second).toISOString()],
      ],
    );
    fold.flush();
  });

  it('writes the folded line when the second is over even if no refusal follows', async () => {
    const lines: Line[] = [];
    const fold = new RefusedRequestLog();
    const now = Date.now();
    fold.ownLine({ info: (details: object) => void lines.push(details as Line) }, 'k', 429, now);
    fold.ownLine({ info: (details: object) => void lines.push(details as Line) }, 'k', 429, now);
    await eventually(() => lines.length === 1, 5000);
    assert.equal(lines[0]!.refused, 1);
  });

  describe('through the app', () => {
    const lines: Line[] = [];
    let harness: Harness;
    let key: string;
    let keyId: string;

    before(async () => {
      const sink = new Writable({
        write(chunk: Buffer, _encoding, done) {
          for (const text of chunk.toString().split('\n')) if (text) lines.push(JSON.parse(text) as Line);
          done();
        },
      });
      harness = await startHarness({ runtime: { logger: pino({ level: 'info' }, sink) } });
      ({ key, id: keyId } = await harness.keyFor('storm', 'enterprise', { overrides: { requests_per_minute: 5 } }));
    });
    after(() => harness.close());

    it('a 429 storm writes at most two lines a second for the key, and every refusal is counted', async () => {
      const started = Date.now();
      const statuses: number[] = [];
      for (let i = 0; i < 400; i++) statuses.push((await harness.app.inject({ url: '/v1/rates/usd_free', headers: { 'x-api-key': key } })).statusCode);
      const seconds = Math.floor(Date.now() / 1000) - Math.floor(started / 1000) + 1;
      const refused = statuses.filter((status) => status === 429).length;
      assert.ok(refused >= 395, `${refused} of 400 refused`);
      const ownLines = () => lines.filter((line) => line.status === 429 && line.reqId !== undefined);
      const folded = () => lines.filter((line) => line.status === 429 && line.key_id === keyId).reduce((sum, line) => sum + Number(line.refused), 0);
      await eventually(() => ownLines().length + folded() === refused, 5000);
      assert.ok(ownLines().length <= seconds, `${ownLines().length} lines of their own in ${seconds} s`);
      assert.ok(lines.filter((line) => line.key_id === keyId).length <= seconds, 'one folded line a second at most');
      assert.ok(!JSON.stringify(lines).includes(key), 'no key in the log');
    });

    it('refusals without a known key fold as one caller', async () => {
      const before = lines.length;
      const started = Date.now();
      const statuses: number[] = [];
      for (let i = 0; i < 200; i++) statuses.push((await harness.app.inject({ url: '/v1/rates/usd_free', headers: { 'x-api-key': `nk_live_${'x'.repeat(20)}${i}` } })).statusCode);
      const seconds = Math.floor(Date.now() / 1000) - Math.floor(started / 1000) + 1;
      const refused = statuses.filter((status) => status === 401 || status === 429).length;
      assert.equal(refused, 200, JSON.stringify([...new Set(statuses)]));
      const mine = () => lines.slice(before).filter((line) => line.status === 401 || line.status === 429);
      const accounted = () => mine().reduce((sum, line) => sum + (line.reqId !== undefined ? 1 : Number(line.refused)), 0);
      await eventually(() => accounted() === refused, 5000);
      assert.ok(mine().length <= 4 * seconds, `${mine().length} lines for ${refused} refusals in ${seconds} s`);
      assert.ok(mine().every((line) => line.reqId !== undefined || line.key_id === null), 'mine().every((line) => line.reqId !== undefined || line.key_id === null)');
    });
  });

  it('writes the folded refusals of the running second when the app closes, not only when the second is over', async () => {
    const lines: Line[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const text of chunk.toString().split('\n')) if (text) lines.push(JSON.parse(text) as Line);
        done();
      },
    });
    // The time stands at the start of a second: its fold is due only a second later, after the close.
    const clock = new ManualClock(Math.ceil(Date.now() / 1000) * 1000);
    const harness = await startHarness({ runtime: { logger: pino({ level: 'info' }, sink), clock } });
    const { key, id } = await harness.keyFor('closing', 'enterprise', { overrides: { requests_per_minute: 1 } });
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) statuses.push((await harness.app.inject({ url: '/v1/rates/usd_free', headers: { 'x-api-key': key } })).statusCode);
    await harness.close();
    const refused = statuses.filter((status) => status === 429).length;
    const accounted = lines.filter((line) => line.status === 429 && (line.reqId !== undefined || line.key_id === id)).reduce((sum, line) => sum + (line.reqId !== undefined ? 1 : Number(line.refused)), 0);
    assert.equal(refused, 19, JSON.stringify(statuses));
    assert.equal(accounted, refused, 'every refusal is in the log once the app has closed');
  });
});

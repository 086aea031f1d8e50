/**
 * Stream alerts in the hub: each stream keeps its own edge state while the
 * streams of a group share their frames. A rule fires after the event that
 * made it true (or after the first snapshot, if it is true then), not again
 * until it has been false; a toman stream compares toman values; a reference
 * the stream no longer reads neither fires nor re-arms; a stream without
 * rules receives exactly what it did before.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { parseAlertList } from '../../src/domain/alert-rule.js';
import { ManualClock } from '../../src/domain/clock.js';
import { NO_DAY_FIELDS, type Rate } from '../../src/domain/rate.js';
import { ZoneTime } from '../../src/domain/time.js';
import { prepareRate } from '../../src/live/prepare.js';
import { RefreshTiers } from '../../src/live/refresh-tiers.js';
import type { PreparedRate, Snapshot } from '../../src/live/snapshot.js';
import { StreamAlerts } from '../../src/stream/alerts.js';
import { StreamHub, type Selection } from '../../src/stream/hub.js';

const clock = new ManualClock(Date.UTC(2026, 10, 22, 12, 0, 0));
const time = new ZoneTime('Asia/Tehran', clock);
const lookup = (name: string) => (['usd_free', 'eur_free'].includes(name.toLowerCase()) ? name.toLowerCase() : name === 'usd' ? 'usd_free' : undefined);
const BOTH: Selection = { intervalSeconds: 0, keys: ['usd_free', 'eur_free'], tag: 'both', unit: 'rial' };

/** A snapshot whose rates are real prepared rates (rial prices, with a toman form), each updated at its own minute. */
function snapshot(version: number, values: Record<string, [string, string | null]>): Snapshot {
  const rates = new Map<string, PreparedRate>();
  for (const [key, [value, change]] of Object.entries(values)) {
    const rate: Rate = {
      key,
      title: key,
      value,
      unit: 'ریال',
      currency: 'IRR',
      per: 'unit',
      source_key: key,
      updated_at: clock.now() + version * 60_000,
      status: 'ok',
      source: 'alpha',
      ...NO_DAY_FIELDS,
      change_percent: change,
    };
    rates.set(key, prepareRate(rate, time));
  }
  return { version, builtAt: clock.now(), rates, lastUpdate: null, counts: { ok: rates.size, stale: 0, unavailable: 0 } };
}

interface Frame {
  event: string;
  data: Record<string, unknown>;
}

/** A stream's client end in process: every frame the hub writes, parsed (one write may hold several alert events). */
function reader(): { sink: Writable; frames: Frame[]; bytes: Buffer[] } {
  const frames: Frame[] = [];
  const bytes: Buffer[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      bytes.push(chunk);
      for (const block of chunk.toString().split('\n\n')) {
        const lines = block.split('\n');
        const event = lines.find((line) => line.startsWith('event: '))?.slice(7);
        const data = lines.find((line) => line.startsWith('data: '))?.slice(6);
        if (event && data) frames.push({ event, data: JSON.parse(data) as Record<string, unknown> });
      }
      done();
    },
  });
  return { sink, frames, bytes };
}

const alertsOf = (frames: Frame[]) => frames.filter((frame) => frame.event === 'alert').map((frame) => frame.data);
const rulesFired = (frames: Frame[]) => alertsOf(frames).map((data) => data.rule);
const alerts = (text: string) => new StreamAlerts(parseAlertList(text, lookup), (ms) => time.format(ms));

describe('stream alerts: per-stream edge state in the hub', () => {
  it('fires once on the crossing, not while it stays true, again after it was false; a stream without rules gets the same bytes as before', () => {
    const history = new RefreshTiers(snapshot(1, { usd_free: ['1000', '0'], eur_free: ['2000', '0'] }), 60);
    const hub = new StreamHub(history, time);
    const plain = reader();
    const watching = reader();
    hub.open(plain.sink, BOTH, () => {});
    hub.open(watching.sink, BOTH, () => {}, alerts('usd>1000;usd_free.change_percent<=-1.5'));
    assert.deepEqual(rulesFired(watching.frames), [], 'neither rule holds at the snapshot');

    history.push(snapshot(2, { usd_free: ['1000.5', '0.05'], eur_free: ['2000', '0'] }));
    assert.deepEqual(rulesFired(watching.frames), ['usd>1000'], 'the crossing, named as written');
    const [fired] = alertsOf(watching.frames);
    assert.deepEqual(fired, { rule: 'usd>1000', key: 'usd_free', value: 1000.5, change_percent: 0.05, at: time.format(clock.now() + 2 * 60_000) });
    assert.equal(watching.frames.at(-2)?.event, 'rates', 'the alert follows the rates event that carries the value');

    history.push(snapshot(3, { usd_free: ['1200', '20'], eur_free: ['2000', '0'] }));
    history.push(snapshot(4, { usd_free: ['1200', '20'], eur_free: ['2001', '0'] }));
    assert.deepEqual(rulesFired(watching.frames), ['usd>1000'], 'still true: no second alert');

    history.push(snapshot(5, { usd_free: ['990', '-1.5'], eur_free: ['2001', '0'] }));
    assert.deepEqual(rulesFired(watching.frames), ['usd>1000', 'usd_free.change_percent<=-1.5'], 'false again (re-armed), and the change rule crossed');
    history.push(snapshot(6, { usd_free: ['1001', '1'], eur_free: ['2001', '0'] }));
    assert.deepEqual(rulesFired(watching.frames), ['usd>1000', 'usd_free.change_percent<=-1.5', 'usd>1000'], 'true again: a second alert');

    assert.equal(alertsOf(plain.frames).length, 0);
    assert.deepEqual(
      plain.frames.map((frame) => frame.event),
      ['snapshot', 'rates', 'rates', 'rates', 'rates', 'rates'],
    );
    // The shared frames are the same Buffers for both members: alerts are written beside them, never into them.
    const shared = watching.bytes.filter((chunk) => !chunk.toString().startsWith('event: alert'));
    assert.equal(shared.length, plain.bytes.length);
    shared.forEach((chunk, i) => assert.equal(chunk, plain.bytes[i]));
    assert.equal(hub.counts().alerts, 3);
    hub.stop();
  });

  it('a rule already true at the first snapshot fires once at open; each stream keeps its own state', () => {
    const history = new RefreshTiers(snapshot(1, { usd_free: ['1500', '0'], eur_free: ['2000', '0'] }), 60);
    const hub = new StreamHub(history, time);
    const early = reader();
    hub.open(early.sink, BOTH, () => {}, alerts('usd_free>1000'));
    assert.deepEqual(
      early.frames.map((frame) => frame.event),
      ['snapshot', 'alert'],
    );
    history.push(snapshot(2, { usd_free: ['900', '0'], eur_free: ['2000', '0'] }));
    const late = reader();
    hub.open(late.sink, BOTH, () => {}, alerts('usd_free>1000'));
    assert.deepEqual(rulesFired(late.frames), [], 'false when this one opened');
    history.push(snapshot(3, { usd_free: ['1100', '0'], eur_free: ['2000', '0'] }));
    assert.equal(rulesFired(early.frames).length, 2, 're-armed at 900, fired at 1100');
    assert.equal(rulesFired(late.frames).length, 1);
    hub.stop();
  });

  it('a toman stream compares toman values: the threshold is in the unit the stream shows', () => {
    const history = new RefreshTiers(snapshot(1, { usd_free: ['10000', '0'], eur_free: ['2000', '0'] }), 60);
    const hub = new StreamHub(history, time);
    const rial = reader();
    const toman = reader();
    hub.open(rial.sink, BOTH, () => {}, alerts('usd_free>5000'));
    hub.open(toman.sink, { ...BOTH, unit: 'toman' }, () => {}, alerts('usd_free>5000'));
    assert.deepEqual(rulesFired(rial.frames), ['usd_free>5000'], '10000 rial > 5000');
    assert.deepEqual(rulesFired(toman.frames), [], '1000 toman is not');
    history.push(snapshot(2, { usd_free: ['50005', '0'], eur_free: ['2000', '0'] }));
    assert.deepEqual(alertsOf(toman.frames), [{ rule: 'usd_free>5000', key: 'usd_free', value: 5000.5, change_percent: 0, at: time.format(clock.now() + 2 * 60_000) }]);
    hub.stop();
  });

  it('a reference the stream no longer reads (its plan narrowed it) neither fires nor re-arms', () => {
    const history = new RefreshTiers(snapshot(1, { usd_free: ['1500', '0'], eur_free: ['2000', '0'] }), 60);
    const hub = new StreamHub(history, time);
    const stream = reader();
    const subscriber = hub.open(stream.sink, BOTH, () => {}, alerts('usd_free>1000;eur_free>2500'));
    assert.deepEqual(rulesFired(stream.frames), ['usd_free>1000']);
    hub.reselect(subscriber, { intervalSeconds: 0, keys: ['eur_free'], tag: 'eur_free', unit: 'rial' });
    history.push(snapshot(2, { usd_free: ['900', '0'], eur_free: ['2000', '0'] }));
    history.push(snapshot(3, { usd_free: ['1100', '0'], eur_free: ['3000', '0'] }));
    assert.deepEqual(rulesFired(stream.frames), ['usd_free>1000', 'eur_free>2500'], 'usd_free is out of its reach; eur_free still alerts');
    hub.reselect(subscriber, BOTH);
    assert.deepEqual(rulesFired(stream.frames), ['usd_free>1000', 'eur_free>2500'], 'back in reach, usd_free was never seen false: still fired');
    hub.stop();
  });
});

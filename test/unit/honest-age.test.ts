import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import type { Catalogue } from '../../src/catalogue/catalogue.js';
import { ManualClock } from '../../src/domain/clock.js';
import { DEFAULT_MARKET_SPECS, marketOfReference } from '../../src/domain/market-specs.js';
import { ZoneTime } from '../../src/domain/time.js';
import { ageSnapshot } from '../../src/live/ageing.js';
import { RatesEngine } from '../../src/live/engine.js';
import { Markets } from '../../src/live/markets.js';
import { SourceMonitor } from '../../src/sources/monitor.js';
import { catalogueWithoutBands, eventually, fileSources, tempDir, writeSource } from '../support/env.js';

const USD = 'ir_fx_free_usd';
const MIN = 60_000;

describe('honest age: a closed market is not a stale price (engine, injected clock)', () => {
  let catalogue: Catalogue;
  const root = tempDir('nerkh-honest-age-');
  const running: RatesEngine[] = [];
  let count = 0;
  before(() => {
    catalogue = catalogueWithoutBands();
  });
  afterEach(() => {
    for (const engine of running.splice(0)) engine.stop();
  });
  after(() => root.cleanup());

  async function start(at: string, updatedAt: string) {
    const clock = new ManualClock(Date.parse(at));
    const time = new ZoneTime('Asia/Tehran', clock);
    // 30 minutes of max age.
    const [config] = fileSources(`${root.path}/${count++}`, ['a'], 30 * 60);
    const btcKey = catalogue.get('btc_usd')!.source_key;
    writeSource(config!.path!, { [USD]: { value: 1_000_000, updated_at: updatedAt }, [btcKey]: { value: 90_000, updated_at: updatedAt } }, new Date(updatedAt));
    const marketOf = new Map(catalogue.references.map((reference) => [reference.key, marketOfReference(reference, DEFAULT_MARKET_SPECS)]));
    const markets = new Markets(DEFAULT_MARKET_SPECS, marketOf);
    const engine = new RatesEngine(catalogue, new SourceMonitor([config!], clock), time, {}, {}, [], markets);
    running.push(engine);
    await engine.start();
    await eventually(() => engine.current().rates.get('usd_free')!.rate.value !== null, 4000);
    const rate = (key: string) => engine.current().rates.get(key)!;
    return { clock, time, engine, markets, rate, btcKey };
  }

  it('keeps an old price ok while tehran is closed on Friday, stale once open time passes its max age; crypto goes stale', async () => {
    // Updated Thursday 23:50 Tehran; now Friday noon: 12 h 10 min of wall time, 10 min of open time.
    const { clock, engine, rate } = await start('2026-11-20T12:00:00+03:30', '2026-11-19T23:50:00+03:30');
    engine.rebuild();
    const usd = rate('usd_free');
    assert.equal(usd.rate.status, 'ok');
    assert.deepEqual(usd.rate.market, { name: 'tehran', state: 'closed', reason: 'Friday', reason_fa: 'جمعه', opens_at: Date.parse('2026-11-21T00:00:00+03:30') });
    assert.ok(usd.json.endsWith(',"market":{"name":"tehran","state":"closed","reason":"Friday","reason_fa":"جمعه","opens_at":"2026-11-21T00:00:00+03:30"}}'), usd.json);
    // Crypto never closes: the same age is stale there, counted by the wall clock.
    const btc = rate('btc_usd');
    assert.equal(btc.rate.status, 'stale');
    assert.equal(btc.rate.market?.state, 'open');
    assert.equal(btc.rate.stale_seconds, 12 * 3600 + 10 * 60);
    // Saturday 00:19: 29 minutes open, still ok, the market open.
    clock.set(Date.parse('2026-11-21T00:19:00+03:30'));
    engine.rebuild();
    assert.equal(rate('usd_free').rate.status, 'ok');
    assert.equal(rate('usd_free').rate.market?.state, 'open');
    // Saturday 00:21: 31 minutes of open time, past 30: stale, its age counted in open time.
    clock.set(Date.parse('2026-11-21T00:21:00+03:30'));
    engine.rebuild();
    assert.equal(rate('usd_free').rate.status, 'stale');
    assert.equal(rate('usd_free').rate.stale_seconds, 31 * 60);
  });

  it('rebuilds by itself when the market opens (its next transition is known) and when an operator declares a day', async () => {
    const { clock, engine, markets, rate } = await start('2026-11-20T23:59:00+03:30', '2026-11-20T23:50:00+03:30');
    assert.equal(rate('usd_free').rate.market?.state, 'closed');
    clock.set(Date.parse('2026-11-21T00:00:01+03:30'));
    // The engine's own tick sees the transition.
    await eventually(() => rate('usd_free').rate.market?.state === 'open', 4000);
    // An operator closes Saturday: every rate of tehran says so at once, and the price stays ok.
    clock.advance(40 * MIN);
    markets.apply([{ market: 'tehran', day: '2026-11-21', action: 'close', reason: 'اعتصاب بازار' }]);
    await eventually(() => rate('usd_free').rate.market?.state === 'closed', 4000);
    assert.equal(rate('usd_free').rate.market?.reason, 'اعتصاب بازار');
    assert.equal(rate('usd_free').rate.status, 'ok');
    assert.equal(engine.current().rates.get('usd_free')!.rate.market, engine.current().rates.get('eur_free')!.rate.market, 'one market object per state');
  });

  it('ages a snapshot on a node that hears no leader by the same rule', async () => {
    const { clock, engine, markets, time, rate } = await start('2026-11-19T23:55:00+03:30', '2026-11-19T23:50:00+03:30');
    assert.equal(rate('usd_free').rate.status, 'ok');
    const snapshot = engine.current();
    engine.stop();
    const maxAge = new Map([['a', 30 * MIN]]);
    // Friday noon: still ok, the market closed; Saturday 00:30: stale by 40 minutes of open time.
    const friday = ageSnapshot(snapshot, Date.parse('2026-11-20T12:00:00+03:30'), maxAge, time, markets);
    assert.equal(friday.rates.get('usd_free')!.rate.status, 'ok');
    assert.equal(friday.rates.get('usd_free')!.rate.market?.state, 'closed');
    clock.set(Date.parse('2026-11-21T00:30:00+03:30'));
    const saturday = ageSnapshot(snapshot, clock.now(), maxAge, time, markets);
    assert.equal(saturday.rates.get('usd_free')!.rate.status, 'stale');
    assert.equal(saturday.rates.get('usd_free')!.rate.stale_seconds, 40 * 60);
    assert.equal(saturday.rates.get('usd_free')!.rate.market?.state, 'open');
  });
});

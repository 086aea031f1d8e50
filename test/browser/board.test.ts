/**
 * /board in a real browser (Debian's Chromium through playwright-core): the
 * page subscribes to GET /v1/stream with EventSource on a live server whose
 * source files the test rewrites, and the value on screen changes in place.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { ARTIFACTS, launchChromiumWithProfile } from './chromium.js';
import { persian, startBoardRig, type BoardRig } from './board-rig.js';
import { ZoneTime } from '../../src/domain/time.js';
import { tempDir, writeSource } from '../support/env.js';
import { SAMPLE, SAMPLE_VALUES } from '../support/harness.js';
import { HANG_MS } from '../support/deadline.js';

describe('/board in Chromium', () => {
  let rig: BoardRig;
  let base: string;
  let key: string;

  before(async () => {
    rig = await startBoardRig();
    ({ base, key } = rig);
  });
  after(async () => {
    await rig?.close();
  });

  const open = (width: number) => rig.open(width);
  const usdValue = (page: Page) => page.locator('li[data-key="usd_free"] .value').innerText();

  it('at 390 px shows the live values in Persian digits and changes one in place when the source moves', async () => {
    rig.writeAlpha({ usd_free: SAMPLE_VALUES.usd_free + 1 });
    const { page, problems, close } = await open(390);
    await page.goto(`${base}/board?keys=usd_free,eur_free,coin_emami&api_key=${key}`, { waitUntil: 'load' });
    await page.waitForSelector('#state[data-state="open"]', { timeout: HANG_MS });
    await page.waitForSelector('li[data-key="usd_free"] .value', { timeout: HANG_MS });

    assert.equal(await page.locator('ul.board li').count(), 3, 'one row per requested rate');
    assert.equal(await usdValue(page), await persian(page, SAMPLE_VALUES.usd_free + 1));
    assert.match(await page.locator('li[data-key="usd_free"] .title').innerText(), /دلار/);
    assert.match(await page.locator('li[data-key="usd_free"] .time').innerText(), /^[۰-۹]{2}:[۰-۹]{2}:[۰-۹]{2}/, 'the time in Persian digits');
    assert.doesNotMatch(page.url(), /api_key/, 'the key is taken out of the address bar');
    assert.equal(await page.evaluate(() => localStorage.getItem('nerkh.board.key')), key, 'and kept for the site, under the board’s name');
    assert.equal(await page.evaluate(() => sessionStorage.getItem('nerkh.key')), null, 'not planted where /account reads its key');
    assert.deepEqual(await page.evaluate(() => [localStorage.length, sessionStorage.length]), [1, 0], 'and nowhere else');
    const euro = await page.locator('li[data-key="eur_free"] .value').innerText();

    // The market moves: the same row shows the new value, without a reload.
    const row = await page.locator('li[data-key="usd_free"]').elementHandle();
    rig.writeAlpha({ usd_free: 1_234_567 });
    const expected = await persian(page, 1_234_567);
    await page.waitForFunction((text) => document.querySelector('li[data-key="usd_free"] .value')?.textContent === text, expected, { timeout: HANG_MS });
    assert.equal(await row!.evaluate((li) => li.isConnected), true, 'updated in place, not redrawn');
    assert.equal(await page.locator('li[data-key="eur_free"] .value').innerText(), euro, 'an unchanged rate stays as it was');
    // The status line holds the time alone, in Persian digits; the event's long id is no longer set beside it.
    assert.match(await page.locator('#updated').innerText(), /^آخرین به‌روزرسانی [۰-۹]{2}:[۰-۹]{2}:[۰-۹]{2}$/);
    assert.match(String(await page.locator('#updated').getAttribute('data-event')), /^\d+$/, 'the event id stays on the element');

    await page.screenshot({ path: join(ARTIFACTS, 'board-390.png'), fullPage: true });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `/board at 390 px scrolls sideways by ${overflow} px`);
    assert.deepEqual(problems, []);
    await close();
  });

  it('says the market is closed, with its reason, instead of a stale mark', async () => {
    // An old dollar (an hour past its sources' max age) and a closure an operator declares for today (whatever day the suite runs).
    const old = new Date(Date.now() - 3_600_000 - 300_000).toISOString();
    rig.writeAlpha({ usd_free: { value: SAMPLE_VALUES.usd_free + 3, updated_at: old } });
    writeSource(rig.harness.config.sources[1]!.path!, { [SAMPLE.usd_free]: { value: SAMPLE_VALUES.usd_free + 3, updated_at: old } });
    const { page, problems, close } = await open(390);
    await page.goto(`${base}/board?keys=usd_free,eur_free&api_key=${key}`, { waitUntil: 'load' });
    await page.waitForSelector('li[data-key="usd_free"][data-status="stale"]', { timeout: HANG_MS });
    assert.match(await page.locator('li[data-key="usd_free"] .age').innerText(), /کهنه/);
    const today = new ZoneTime('Asia/Tehran').day(Date.now());
    await rig.harness.store.calendar.declare('tehran', [today], 'close', 'اعتصاب بازار');
    await page.waitForSelector('li[data-key="usd_free"][data-status="closed"]', { timeout: HANG_MS });
    const age = await page.locator('li[data-key="usd_free"] .age').innerText();
    assert.match(age, /بازار تعطیل است: اعتصاب بازار/);
    assert.match(age, /market closed/);
    assert.doesNotMatch(age, /کهنه/, 'no stale mark while the market is closed');
    // Opened again: the stale mark is back.
    await rig.harness.store.calendar.declare('tehran', [today], 'open', null);
    await page.waitForSelector('li[data-key="usd_free"][data-status="stale"]', { timeout: HANG_MS });
    assert.deepEqual(problems, []);
    await close();
  });

  it('at 1280 px connects from a pasted key (kept for the site) to the default board', async () => {
    const { page, problems, close } = await open(1280);
    await page.goto(`${base}/board`, { waitUntil: 'load' });
    assert.equal(await page.locator('#state').getAttribute('data-state'), 'idle');
    assert.match(await page.locator('.note').innerText(), /EventSource/, 'the page says why the key goes in the URL');
    await page.fill('#key', key);
    await page.click('button[type="submit"]');
    await page.waitForSelector('#state[data-state="open"]', { timeout: HANG_MS });
    await page.waitForSelector('li[data-key="usd_free"] .value', { timeout: HANG_MS });
    assert.ok((await page.locator('ul.board li').count()) >= 5, 'the default list of popular rates');
    assert.equal(await page.evaluate(() => localStorage.getItem('nerkh.board.key')), key);
    // A desk screen: the status line's time stands apart from everything else on its line.
    assert.doesNotMatch(await page.locator('.bar').innerText(), /[0-9]/, 'no ASCII number beside the Persian time');
    await page.screenshot({ path: join(ARTIFACTS, 'board-1280.png'), fullPage: true });
    await page.click('#forget');
    assert.equal(await page.locator('#state').getAttribute('data-state'), 'idle');
    assert.equal(await page.evaluate(() => localStorage.getItem('nerkh.board.key')), null, 'the key is forgotten');
    assert.equal(await page.locator('#forget').isVisible(), false, 'with no key kept, nothing to forget');
    assert.deepEqual(problems, []);
    await close();
  });

  it('leaves no key in the address or the tab’s history, whatever spelling brought it', async () => {
    const cases: { path: string; address: string; connects: boolean }[] = [
      { path: `/board?keys=usd_free&api_key=${key}`, address: '/board?keys=usd_free', connects: true },
      { path: `/board?api%5Fkey=${encodeURIComponent(key)}&keys=usd_free`, address: '/board?keys=usd_free', connects: true },
      { path: `/board?api_key=+${key}+`, address: '/board', connects: true },
      // Not the board's spelling: not used, but not left in the address either.
      { path: `/board?API_KEY=${key}&keys=usd_free`, address: '/board?keys=usd_free', connects: false },
      { path: `/board?keys=${key}`, address: '/board', connects: false },
      { path: `/board#api_key=${key}`, address: '/board', connects: false },
      // TV mode stays in the address (with the list, its commas as written); another mode does not.
      { path: `/board?mode=tv&keys=usd_free,eur_free&api_key=${key}`, address: '/board?keys=usd_free,eur_free&mode=tv', connects: true },
      { path: `/board?api_key=${key}&mode=tv`, address: '/board?mode=tv', connects: true },
      { path: `/board?mode=TV&api_key=${key}`, address: '/board', connects: true },
      { path: `/board?mode=tv&mode=tv&api_key=${key}`, address: '/board', connects: true },
      // A unit the API takes stays (the toman test below); another does not.
      { path: `/board?unit=TOMAN&mode=tv&api_key=${key}`, address: '/board?mode=tv', connects: true },
    ];
    for (const { path, address, connects } of cases) {
      const { page, problems, close } = await open(1280);
      await page.goto(`${base}${path}`, { waitUntil: 'load' });
      await page.waitForSelector(`#state[data-state="${connects ? 'open' : 'idle'}"]`, { timeout: HANG_MS });
      assert.equal(page.url(), `${base}${address}`, `${path}: the address bar`);
      // The tab opened on about:blank, then the board: two entries, the key's address replaced rather than kept behind.
      assert.equal(await page.evaluate(() => history.length), 2, `${path}: the history's length`);
      // Away and Back: the entry the tab returns to is the clean one, and the one before it is the blank page.
      await page.goto(`${base}/status`, { waitUntil: 'load' });
      await page.goBack({ waitUntil: 'load' });
      assert.equal(page.url(), `${base}${address}`, `${path}: the history entry`);
      assert.equal(await page.evaluate(() => sessionStorage.getItem('nerkh.key')), null, `${path}: not planted where /account reads its key`);
      assert.deepEqual(await page.evaluate(() => Object.keys(localStorage)), connects ? ['nerkh.board.key'] : [], `${path}: the key kept, under the board's name`);
      await page.goBack({ waitUntil: 'load' });
      assert.equal(page.url(), 'about:blank', `${path}: no entry with the key behind the board`);
      assert.deepEqual(problems, [], path);
      await close();
    }
  });

  it('with unit=toman shows rial prices in toman, exactly (a half toman too), and keeps the unit in the address', async () => {
    // 1,000,000,005 rials: 100,000,000.5 toman.
    rig.writeAlpha({ coin_emami: SAMPLE_VALUES.coin_emami + 5 });
    const { page, problems, close } = await open(1280);
    await page.goto(`${base}/board?mode=tv&unit=toman&keys=coin_emami,gold_ounce&api_key=${key}`, { waitUntil: 'load' });
    await page.waitForSelector('#state[data-state="open"]', { timeout: HANG_MS });
    const toman = await persian(page, 100_000_000.5);
    await page.waitForFunction((text) => document.querySelector('li[data-key="coin_emami"] .value')?.textContent === text, toman, { timeout: HANG_MS });
    assert.match(await page.locator('li[data-key="coin_emami"] .unit').innerText(), /^تومان\//, 'the label says toman');
    assert.equal(await page.locator('li[data-key="gold_ounce"] .value').innerText(), await persian(page, SAMPLE_VALUES.gold_ounce + 1), 'a dollar price is the same in either unit');
    assert.match(await page.locator('li[data-key="gold_ounce"] .unit').innerText(), /^دلار/);
    assert.equal(page.url(), `${base}/board?keys=coin_emami,gold_ounce&unit=toman&mode=tv`, 'the unit stays in the address');
    await page.screenshot({ path: join(ARTIFACTS, 'board-toman.png'), fullPage: true });
    assert.deepEqual(problems, []);
    await close();
  });

  it('names the requested rates it leaves out (unknown, or outside the plan), on the desk board and on the TV', async () => {
    const shop = (await rig.harness.keyFor('board-two-rates', 'pro', { references: ['usd_free', 'coin_emami'] })).key;
    for (const [mode, width, height] of [
      ['', 1280, 900],
      ['mode=tv&', 1920, 1080],
    ] as const) {
      const { page, problems, close } = await rig.open(width, height);
      await page.goto(`${base}/board?${mode}keys=usd_free,usd_fre,gold_18k,coin_emami&api_key=${shop}`, { waitUntil: 'load' });
      await page.waitForSelector('#state[data-state="open"]', { timeout: HANG_MS });
      await page.waitForSelector('#dropped:not([hidden])', { timeout: HANG_MS });
      assert.deepEqual(await page.locator('ul.board li').evaluateAll((items) => items.map((li) => (li as HTMLElement).dataset.key)), ['usd_free', 'coin_emami']);
      const unknown = await page.locator('#dropped [data-kind="unknown"]').innerText();
      assert.match(unknown, /^این نرخ‌ها شناخته نیستند · Unknown keys, not shown: usd_fre$/, `${mode || 'desk'}: ${unknown}`);
      const denied = await page.locator('#dropped [data-kind="denied"]').innerText();
      assert.match(denied, /^این نرخ‌ها در طرح شما نیستند · Not in your plan, not shown: gold_18k$/, `${mode || 'desk'}: ${denied}`);
      const box = (await page.locator('#dropped').boundingBox())!;
      assert.ok(box.x >= 0 && box.y >= 0 && box.x + box.width <= width && box.y + box.height <= height, `${mode || 'desk'}: the note is on the screen (${JSON.stringify(box)})`);
      const tiles = await page.locator('ul.board li').evaluateAll((items) => items.map((li) => li.getBoundingClientRect().toJSON() as DOMRect));
      for (const tile of tiles) assert.ok(tile.bottom <= box.y || tile.top >= box.y + box.height, `${mode || 'desk'}: a tile ${JSON.stringify(tile)} covers the note ${JSON.stringify(box)}`);
      await page.screenshot({ path: join(ARTIFACTS, `board-dropped${mode ? '-tv' : ''}.png`) });
      assert.deepEqual(problems, []);
      await close();
    }
    // A list the plan covers whole says nothing more: the snapshot came, and no note before it.
    const { page, close } = await rig.open(1280);
    await page.goto(`${base}/board?keys=usd_free,coin_emami&api_key=${shop}`, { waitUntil: 'load' });
    await page.waitForSelector('li[data-key="coin_emami"] .value', { timeout: HANG_MS });
    assert.equal(await page.locator('#dropped').isHidden(), true);
    await close();
  });

  it('keeps the key for the site: a new tab and a restarted browser connect without asking, until “Forget this key”', async () => {
    const profile = tempDir('nerkh-board-profile-');
    const address = `${base}/board?mode=tv&keys=usd_free`;
    const problems: string[] = [];
    const launch = async () => {
      const browser = await launchChromiumWithProfile(profile.path, 1920, 1080);
      browser.on('page', (page) => page.on('pageerror', (error) => problems.push(error.message)));
      return browser;
    };
    const board = async (browser: Awaited<ReturnType<typeof launch>>, path: string, state: 'open' | 'idle') => {
      const page = await browser.newPage();
      await page.goto(path, { waitUntil: 'load' });
      await page.waitForSelector(`#state[data-state="${state}"]`, { timeout: HANG_MS });
      return page;
    };
    try {
      let browser = await launch();
      await board(browser, `${address}&api_key=${key}`, 'open');
      // Another tab, its address without the key.
      const tab = await board(browser, address, 'open');
      assert.equal(await tab.locator('#forget').isVisible(), true, 'the TV shows “Forget this key” while one is kept');
      await browser.close();

      // The browser restarted on the same profile: connected at once.
      browser = await launch();
      const first = await board(browser, address, 'open');
      const second = await board(browser, address, 'open');
      await first.click('#forget');
      await first.waitForSelector('#state[data-state="idle"]', { timeout: HANG_MS });
      assert.equal(await first.evaluate(() => localStorage.getItem('nerkh.board.key')), null);
      // Forgotten for the site: the other tab stops, and a new one asks again.
      await second.waitForSelector('#state[data-state="idle"]', { timeout: HANG_MS });
      const third = await board(browser, address, 'idle');
      assert.equal(await third.locator('#key').isVisible(), true, 'the key is asked for again');
      assert.equal(await third.locator('#forget').isVisible(), false);
      await browser.close();
      assert.deepEqual(problems, []);
    } finally {
      profile.cleanup();
    }
  });

  it('says why when the stream is refused (a key that is not valid)', async () => {
    const { page, problems, close } = await open(390);
    await page.goto(`${base}/board?api_key=nrk_${'x'.repeat(32)}`, { waitUntil: 'load' });
    await page.waitForSelector('#state[data-state="closed"]', { timeout: HANG_MS });
    await page.waitForSelector('#message:not([hidden])', { timeout: HANG_MS });
    assert.match(await page.locator('#message').innerText(), /The key is not valid/);
    // The browser reports the refused stream and the 401 itself; nothing else may go wrong.
    assert.deepEqual(
      problems.filter((problem) => !/401|EventSource/.test(problem)),
      [],
    );
    await close();
  });
});

/**
 * /board in a real browser (Debian's Chromium through playwright-core): the
 * page subscribes to GET /v1/stream with EventSource on a live server whose
 * source files the test rewrites, and the value on screen changes in place.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { ARTIFACTS } from './chromium.js';
import { persian, startBoardRig, type BoardRig } from './board-rig.js';
import { SAMPLE_VALUES } from '../support/harness.js';

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
    await page.waitForSelector('#state[data-state="open"]', { timeout: 10_000 });
    await page.waitForSelector('li[data-key="usd_free"] .value', { timeout: 10_000 });

    assert.equal(await page.locator('ul.board li').count(), 3, 'one row per requested rate');
    assert.equal(await usdValue(page), await persian(page, SAMPLE_VALUES.usd_free + 1));
    assert.match(await page.locator('li[data-key="usd_free"] .title').innerText(), /دلار/);
    assert.match(await page.locator('li[data-key="usd_free"] .time').innerText(), /^[۰-۹]{2}:[۰-۹]{2}:[۰-۹]{2}/, 'the time in Persian digits');
    assert.doesNotMatch(page.url(), /api_key/, 'the key is taken out of the address bar');
    assert.equal(await page.evaluate(() => sessionStorage.getItem('nerkh.board.key')), key, "and kept in the board's session");
    assert.equal(await page.evaluate(() => sessionStorage.getItem('nerkh.key')), null, 'not planted where /account reads its key');
    assert.equal(await page.evaluate(() => localStorage.length), 0, 'and nowhere else');
    const euro = await page.locator('li[data-key="eur_free"] .value').innerText();

    // The market moves: the same row shows the new value, without a reload.
    const row = await page.locator('li[data-key="usd_free"]').elementHandle();
    rig.writeAlpha({ usd_free: 1_234_567 });
    const expected = await persian(page, 1_234_567);
    await page.waitForFunction((text) => document.querySelector('li[data-key="usd_free"] .value')?.textContent === text, expected, { timeout: 10_000 });
    assert.equal(await row!.evaluate((li) => li.isConnected), true, 'updated in place, not redrawn');
    assert.equal(await page.locator('li[data-key="eur_free"] .value').innerText(), euro, 'an unchanged rate stays as it was');
    assert.match(await page.locator('#updated').innerText(), /event \d+/);

    await page.screenshot({ path: join(ARTIFACTS, 'board-390.png'), fullPage: true });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `/board at 390 px scrolls sideways by ${overflow} px`);
    assert.deepEqual(problems, []);
    await close();
  });

  it('at 1280 px connects from a pasted key (kept in the session) to the default board', async () => {
    const { page, problems, close } = await open(1280);
    await page.goto(`${base}/board`, { waitUntil: 'load' });
    assert.equal(await page.locator('#state').getAttribute('data-state'), 'idle');
    assert.match(await page.locator('.note').innerText(), /EventSource/, 'the page says why the key goes in the URL');
    await page.fill('#key', key);
    await page.click('button[type="submit"]');
    await page.waitForSelector('#state[data-state="open"]', { timeout: 10_000 });
    await page.waitForSelector('li[data-key="usd_free"] .value', { timeout: 10_000 });
    assert.ok((await page.locator('ul.board li').count()) >= 5, 'the default list of popular rates');
    assert.equal(await page.evaluate(() => sessionStorage.getItem('nerkh.board.key')), key);
    await page.screenshot({ path: join(ARTIFACTS, 'board-1280.png'), fullPage: true });
    await page.click('#stop');
    assert.equal(await page.locator('#state').getAttribute('data-state'), 'idle');
    assert.equal(await page.evaluate(() => sessionStorage.getItem('nerkh.board.key')), null, 'the key is forgotten');
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
    ];
    for (const { path, address, connects } of cases) {
      const { page, problems, close } = await open(1280);
      await page.goto(`${base}${path}`, { waitUntil: 'load' });
      await page.waitForSelector(`#state[data-state="${connects ? 'open' : 'idle'}"]`, { timeout: 10_000 });
      assert.equal(page.url(), `${base}${address}`, `${path}: the address bar`);
      // The tab opened on about:blank, then the board: two entries, the key's address replaced rather than kept behind.
      assert.equal(await page.evaluate(() => history.length), 2, `${path}: the history's length`);
      // Away and Back: the entry the tab returns to is the clean one, and the one before it is the blank page.
      await page.goto(`${base}/status`, { waitUntil: 'load' });
      await page.goBack({ waitUntil: 'load' });
      assert.equal(page.url(), `${base}${address}`, `${path}: the history entry`);
      assert.equal(await page.evaluate(() => sessionStorage.getItem('nerkh.key')), null, `${path}: not planted where /account reads its key`);
      assert.equal(await page.evaluate(() => localStorage.length), 0);
      await page.goBack({ waitUntil: 'load' });
      assert.equal(page.url(), 'about:blank', `${path}: no entry with the key behind the board`);
      assert.deepEqual(problems, [], path);
      await close();
    }
  });

  it('says why when the stream is refused (a key that is not valid)', async () => {
    const { page, problems, close } = await open(390);
    await page.goto(`${base}/board?api_key=nrk_${'x'.repeat(32)}`, { waitUntil: 'load' });
    await page.waitForSelector('#state[data-state="closed"]', { timeout: 10_000 });
    await page.waitForSelector('#message:not([hidden])', { timeout: 10_000 });
    assert.match(await page.locator('#message').innerText(), /The key is not valid/);
    // The browser reports the refused stream and the 401 itself; nothing else may go wrong.
    assert.deepEqual(
      problems.filter((problem) => !/401|EventSource/.test(problem)),
      [],
    );
    await close();
  });
});

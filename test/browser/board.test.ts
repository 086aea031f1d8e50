/**
 * /board in a real browser (Debian's Chromium through playwright-core): the
 * page subscribes to GET /v1/stream with EventSource on a live server whose
 * source files the test rewrites, and the value on screen changes in place.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ARTIFACTS, launchChromium, watchedPage } from './chromium.js';
import { writeSource } from '../support/env.js';
import { SAMPLE, SAMPLE_VALUES, startHarness, type Harness } from '../support/harness.js';

describe('/board in Chromium', () => {
  let harness: Harness;
  let browser: Browser;
  let base: string;
  let key: string;

  /** Alpha (the first source) with every sample rate, the dollar at `usd`, stamped now. */
  const writeAlpha = (usd: number) => {
    const items = Object.fromEntries(Object.entries(SAMPLE).map(([name, sourceKey]) => [sourceKey, SAMPLE_VALUES[name as keyof typeof SAMPLE] + 1]));
    items[SAMPLE.usd_free] = usd;
    writeSource(harness.config.sources[0]!.path!, items);
  };

  before(async () => {
    harness = await startHarness();
    base = await harness.app.listen({ port: 0, host: '127.0.0.1' });
    // Enterprise: the stream service on a 1 s tier, so a change shows within a second or two.
    ({ key } = await harness.keyFor('board-user', 'enterprise'));
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await harness?.close();
  });

  /** A page at `width` that records console errors and any request leaving this server. */
  async function open(width: number): Promise<{ page: Page; problems: string[]; close: () => Promise<void> }> {
    const { context, page, problems } = await watchedPage(browser, base, width);
    return { page, problems, close: () => context.close() };
  }

  /** The text the page shows for a number: the browser's own Persian formatting. */
  const persian = (page: Page, value: number) => page.evaluate((n) => new Intl.NumberFormat('fa-IR', { maximumFractionDigits: 8 }).format(n), value);
  const usdValue = (page: Page) => page.locator('li[data-key="usd_free"] .value').innerText();

  it('at 390 px shows the live values in Persian digits and changes one in place when the source moves', async () => {
    writeAlpha(SAMPLE_VALUES.usd_free + 1);
    const { page, problems, close } = await open(390);
    await page.goto(`${base}/board?keys=usd_free,eur_free,coin_emami&api_key=${key}`, { waitUntil: 'load' });
    await page.waitForSelector('#state[data-state="open"]', { timeout: 10_000 });
    await page.waitForSelector('li[data-key="usd_free"] .value', { timeout: 10_000 });

    assert.equal(await page.locator('ul.board li').count(), 3, 'one row per requested rate');
    assert.equal(await usdValue(page), await persian(page, SAMPLE_VALUES.usd_free + 1));
    assert.match(await page.locator('li[data-key="usd_free"] .title').innerText(), /دلار/);
    assert.match(await page.locator('li[data-key="usd_free"] .time').innerText(), /^[۰-۹]{2}:[۰-۹]{2}:[۰-۹]{2}/, 'the time in Persian digits');
    assert.doesNotMatch(page.url(), /api_key/, 'the key is taken out of the address bar');
    assert.equal(await page.evaluate(() => sessionStorage.getItem('nerkh.key')), key, 'and kept in the session');
    assert.equal(await page.evaluate(() => localStorage.length), 0, 'and nowhere else');
    const euro = await page.locator('li[data-key="eur_free"] .value').innerText();

    // The market moves: the same row shows the new value, without a reload.
    const row = await page.locator('li[data-key="usd_free"]').elementHandle();
    writeAlpha(1_234_567);
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
    assert.equal(await page.evaluate(() => sessionStorage.getItem('nerkh.key')), key);
    await page.screenshot({ path: join(ARTIFACTS, 'board-1280.png'), fullPage: true });
    await page.click('#stop');
    assert.equal(await page.locator('#state').getAttribute('data-state'), 'idle');
    assert.equal(await page.evaluate(() => sessionStorage.getItem('nerkh.key')), null, 'the key is forgotten');
    assert.deepEqual(problems, []);
    await close();
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

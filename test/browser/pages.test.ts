/**
 * The public pages in a real browser: Debian's Chromium driven by
 * playwright-core (never a downloaded browser). Screenshots go to
 * test-artifacts/ (ignored by git). A missing /usr/bin/chromium fails loudly.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ARTIFACTS, launchChromium, watchedPage } from './chromium.js';
import { startHarness, type Harness } from '../support/harness.js';

const WIDTHS = [1280, 390];

describe('public pages in Chromium', () => {
  let harness: Harness;
  let browser: Browser;
  let base: string;
  let key: string;

  before(async () => {
    harness = await startHarness();
    base = await harness.app.listen({ port: 0, host: '127.0.0.1' });
    ({ key } = await harness.keyFor('browser-user', 'pro'));
    // Some usage and one error, so the charts and the log have something to draw.
    for (let i = 0; i < 3; i++) await fetch(`${base}/v1/rates/usd_free`, { headers: { 'x-api-key': key } });
    await fetch(`${base}/v1/rates/no_such_key`, { headers: { 'x-api-key': key } });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await harness?.close();
  });

  /** Open `path` at `width`; fail on any console error or any request outside this server. */
  async function visit(path: string, width: number, prepare?: (page: Page) => Promise<void>): Promise<{ page: Page; done: () => Promise<void> }> {
    const { context, page, problems } = await watchedPage(browser, base, width);
    await page.goto(`${base}${path}`, { waitUntil: 'networkidle' });
    if (prepare) await prepare(page);
    return {
      page,
      done: async () => {
        await page.screenshot({ path: join(ARTIFACTS, `${path.replace(/\W+/g, '_') || 'home'}-${width}.png`), fullPage: true });
        if (width <= 390) {
          const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
          assert.ok(overflow <= 0, `${path} at ${width} px scrolls sideways by ${overflow} px`);
        }
        assert.deepEqual(problems, [], `${path} at ${width} px`);
        await context.close();
      },
    };
  }

  for (const width of WIDTHS) {
    it(`/ at ${width} px links to the docs, status, account and board pages`, async () => {
      const { page, done } = await visit('/', width);
      for (const href of ['/docs', '/status', '/account', '/board']) assert.equal(await page.locator(`a[href="${href}"]`).count(), 1, href);
      await done();
    });

    it(`/status at ${width} px shows Persian digits and fits`, async () => {
      const { page, done } = await visit('/status', width);
      const text = await page.locator('body').innerText();
      assert.match(text, /[۰-۹]{4}\/[۰-۹]{2}\/[۰-۹]{2}/, 'a Jalali date in Persian digits');
      await done();
    });

    it(`/docs at ${width} px renders the reference`, async () => {
      const { page, done } = await visit('/docs/', width, async (p) => {
        await p.waitForSelector('.opblock', { timeout: 15_000 });
      });
      assert.ok((await page.locator('.opblock').count()) >= 8, 'operations listed');
      assert.equal(await page.title(), 'Nerkh API reference · مستندات نرخ');
      await done();
    });

    it(`/account at ${width} px draws the charts from a pasted key`, async () => {
      const { page, done } = await visit('/account', width, async (p) => {
        await p.fill('#key', key);
        await p.click('button[type="submit"]');
        await p.waitForSelector('#report:not([hidden]) canvas', { timeout: 10_000 });
      });
      assert.equal(await page.evaluate(() => sessionStorage.getItem('nerkh.key')), key, 'the key is kept in the session');
      assert.equal(await page.evaluate(() => localStorage.length), 0, 'and nowhere else');
      const summary = await page.locator('#summary').innerText();
      assert.match(summary, /browser-user/);
      assert.match(summary, /[۰-۹]/, 'Persian digits in the figures');
      assert.ok((await page.locator('#services tr').count()) >= 1, 'share per service');
      assert.match(await page.locator('#errors').innerText(), /RATE_NOT_FOUND/, 'the error log');
      await done();
    });
  }
});

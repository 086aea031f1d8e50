/**
 * The public pages in a real browser: Debian's Chromium driven by
 * playwright-core (never a downloaded browser). Screenshots go to
 * test-artifacts/ (ignored by git). A missing /usr/bin/chromium fails loudly.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ARTIFACTS, watchedPage } from './chromium.js';
import { spend, startPageRig, type PageRig } from './page-rig.js';
import type { Harness } from '../support/harness.js';
import { newSecret } from '../../src/webhooks/events.js';
import { HANG_MS } from '../support/deadline.js';

const WIDTHS = [1280, 390];

describe('public pages in Chromium', () => {
  let rig: PageRig | undefined;
  let harness: Harness;
  let browser: Browser;
  let base: string;
  let key: string;

  before(async () => {
    rig = await startPageRig('browser-user', 'pro');
    ({ harness, browser, base, key } = rig);
    // Some usage and one error three times (one entry of the log, with its count), so the charts and the log have something to draw.
    await spend(rig, '/v1/rates/usd_free', 3);
    await spend(rig, '/v1/rates/no_such_key', 3);
    // A webhook endpoint whose rule never holds here and two lines of its log (as the sender writes them; no delivery is queued, so nothing is sent).
    const account = (await harness.store.accounts.find('browser-user'))!;
    await harness.store.webhooks.create({ id: 'wh_browser00000001', accountId: account.id, url: 'https://hooks.invalid/nerkh?x=1', secret: newSecret(), rules: ['usd_free>999999999999'], events: ['stale'] });
    const at = Date.now();
    const line = { account_id: account.id, endpoint_id: 'wh_browser00000001', message_id: 'msg_browser1', type: 'rate.alert', error: null, at, minute: at - (at % 60_000), count: 1 };
    await harness.store.connection.db
      .insertInto('webhook_log')
      .values([
        { ...line, attempt: 1, status_code: 500, error: 'HTTP 500', duration_ms: 12, outcome: 'retrying' },
        { ...line, attempt: 2, status_code: 204, duration_ms: 9, outcome: 'delivered' },
      ])
      .execute();
  });
  after(() => rig?.close());

  /** Open `path` at `width`; fail on any console error, any policy violation or any request outside this server. */
  async function visit(path: string, width: number, prepare?: (page: Page) => Promise<void>): Promise<{ page: Page; problems: string[]; done: () => Promise<void> }> {
    const { context, page, problems } = await watchedPage(browser, base, width);
    await page.goto(`${base}${path}`, { waitUntil: 'networkidle' });
    if (prepare) await prepare(page);
    return {
      page,
      problems,
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

  it('a policy violation is caught: the guard of every test below can fail', async () => {
    const { page, problems } = await visit('/', 1280);
    await page.evaluate(() => {
      const note = document.createElement('div');
      note.setAttribute('style', 'color: red');
      document.body.appendChild(note);
    });
    await page.waitForTimeout(200);
    assert.ok(
      problems.some((problem) => problem.startsWith('policy violation: style-src')),
      `an inline style attribute is reported: ${JSON.stringify(problems)}`,
    );
    await page.context().close();
  });

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
      // The history and the push stream, each with its state, among the services.
      for (const heading of ['History (candles)', 'Push stream']) assert.ok(await page.getByRole('heading', { name: heading }).isVisible(), heading);
      assert.match(await page.locator('table', { has: page.locator('#last-candle') }).innerText(), /One-minute candles \d+ days/);
      assert.match(await page.locator('#open-streams').innerText(), /[۰-۹]+/);
      await done();
    });

    it(`/docs at ${width} px renders the reference`, async () => {
      const { page, done } = await visit('/docs/', width, async (p) => {
        await p.waitForSelector('.opblock', { timeout: HANG_MS });
      });
      assert.ok((await page.locator('.opblock').count()) >= 8, 'operations listed');
      assert.equal(await page.title(), 'Nerkh API reference · مستندات نرخ');
      await done();
    });

    it(`/account at ${width} px draws the charts from a pasted key`, async () => {
      const { page, done } = await visit('/account', width, async (p) => {
        await p.fill('#key', key);
        await p.click('button[type="submit"]');
        await p.waitForSelector('#report:not([hidden]) canvas', { timeout: HANG_MS });
      });
      assert.equal(await page.evaluate(() => sessionStorage.getItem('nerkh.key')), key, 'the key is kept in the session');
      assert.equal(await page.evaluate(() => localStorage.length), 0, 'and nowhere else');
      const summary = await page.locator('#summary').innerText();
      assert.match(summary, /browser-user/);
      assert.match(summary, /[۰-۹]/, 'Persian digits in the figures');
      assert.ok((await page.locator('#services tr').count()) >= 1, 'share per service');
      assert.match(await page.locator('#errors').innerText(), /RATE_NOT_FOUND/, 'the error log');
      // The three failures are one entry with its count (two entries only if they straddled a minute).
      const rows = await page.locator('#errors tr').allInnerTexts();
      assert.ok(rows.length === 1 || rows.length === 2, rows.join('\n'));
      // An entry without "×N" stands for one failure; the counts add up to the three failures.
      const persianDigit = (text: string) => Number(text.replace(/[۰-۹]/g, (d) => String('۰۱۲۳۴۵۶۷۸۹'.indexOf(d))));
      const counted = rows.map((row) => /×([۰-۹]+)/.exec(row)).reduce((sum, count) => sum + (count ? persianDigit(count[1]!) : 1), 0);
      assert.equal(counted, 3, rows.join('\n'));
      if (rows.length === 1) assert.match(rows[0]!, /×۳/, 'the entry shows its count');
      // The webhooks part: the endpoint (no secret anywhere) and its log, newest first.
      await page.waitForSelector('#hooks:not([hidden])', { timeout: HANG_MS });
      assert.match(await page.locator('#endpoints').innerText(), /wh_browser00000001[\s\S]*https:\/\/hooks\.invalid\/nerkh\?x=1[\s\S]*usd_free>999999999999 stale/);
      assert.doesNotMatch(await page.locator('#hooks').innerText(), /whsec_/);
      const log = await page.locator('#deliveries tr').allInnerTexts();
      assert.equal(log.length, 2, log.join('\n'));
      assert.match(log[0]!, /rate\.alert[\s\S]*HTTP 204[\s\S]*delivered/);
      assert.match(log[1]!, /HTTP 500 · 12 ms[\s\S]*retrying/);
      await done();
    });
  }
});

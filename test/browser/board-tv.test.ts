/**
 * /board?mode=tv, the board for a shop's screen, in Chromium on a live
 * server: it fills full-HD and 4K screens with large type and nothing to
 * scroll; a stale price is dimmed with its age; only a price that changed
 * flashes (a stale one is sent again every second with its age grown); and
 * when the server cannot be reached the whole board says since when, until
 * it is back, also behind the shipped HAProxy, which answers 503 while the
 * node is away (EventSource gives up on an error status; the page does not).
 * The stale, flash and link states hold on the ordinary board too.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { ARTIFACTS } from './chromium.js';
import { persian, startBoardRig, type BoardRig, type SourceItem } from './board-rig.js';
import { BOARD_DEFAULT_KEYS, LOST_AFTER_MS } from '../../src/web/board-page.js';
import { loadCatalogue } from '../../src/catalogue/load.js';
import { BUNDLED_CATALOGUE } from '../../src/config.js';
import { tempDir } from '../support/env.js';
import { startShippedProxy } from '../support/haproxy.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { HANG_MS } from '../support/deadline.js';

const DEFAULT_KEYS = BOARD_DEFAULT_KEYS.split(',');
/** Not among the second source's rates, so alpha's old value is the newest there is: served stale. */
const STALE_KEY = 'coin_bahar';
const STALE_MINUTES = 10;
const PERSIAN_TIME = /[۰-۹]{2}:[۰-۹]{2}:[۰-۹]{2}/;

/** "14:05:32" on the service's clock (the harness runs in Asia/Tehran) as seconds of the day. */
const tehranSeconds = (ms: number) => {
  const [h, m, s] = new Intl.DateTimeFormat('en-GB', { timeZone: 'Asia/Tehran', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' }).format(ms).split(':').map(Number);
  return h! * 3600 + m! * 60 + s!;
};
/** Persian digits read as ASCII ones. */
const ascii = (text: string) => text.replace(/[۰-۹]/g, (d) => String('۰۱۲۳۴۵۶۷۸۹'.indexOf(d)));
const persianSeconds = (text: string) => {
  const match = /(\d{2}):(\d{2}):(\d{2})/.exec(ascii(text));
  assert.ok(match, `a time in ${JSON.stringify(text)}`);
  const [h, m, s] = match.slice(1).map(Number);
  return h! * 3600 + m! * 60 + s!;
};
/** Seconds between two times of day, across midnight. */
const apart = (a: number, b: number) => Math.min(Math.abs(a - b), 86_400 - Math.abs(a - b));

/**
 * Records, in the page, every rate each `rates` event brought and every flash
 * (an animation starting on a tile), before the page's own script runs.
 */
async function recordEventsAndFlashes(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const seen = { received: [] as string[], flashed: [] as string[] };
    (window as unknown as { seen: typeof seen }).seen = seen;
    const Native = window.EventSource;
    window.EventSource = class extends Native {
      constructor(url: string | URL, init?: EventSourceInit) {
        super(url, init);
        this.addEventListener('rates', (event) => seen.received.push(...(JSON.parse((event as MessageEvent<string>).data) as { rates: { key: string }[] }).rates.map((rate) => rate.key)));
      }
    };
    document.addEventListener('animationstart', (event) => {
      const key = (event.target as HTMLElement).dataset.key;
      if (key) seen.flashed.push(key);
    });
  });
}
const seen = (page: Page) => page.evaluate(() => (window as unknown as { seen: { received: string[]; flashed: string[] } }).seen);

describe('/board?mode=tv in Chromium', () => {
  let rig: BoardRig;
  /** Every default rate at the demo's level, the stale one last updated ten minutes ago. */
  let levels: Record<string, SourceItem>;

  before(async () => {
    rig = await startBoardRig();
    const catalogue = loadCatalogue(BUNDLED_CATALOGUE);
    const demo = JSON.parse(readFileSync(new URL('../../data/demo/levels.json', import.meta.url), 'utf8')) as Record<string, number>;
    levels = Object.fromEntries(DEFAULT_KEYS.map((key) => [key, demo[catalogue.lookup(key)!.source_key]!]));
    levels[STALE_KEY] = { value: levels[STALE_KEY] as number, updated_at: new Date(Date.now() - STALE_MINUTES * 60_000).toISOString() };
    rig.writeAlpha(levels);
  });
  after(async () => {
    await rig?.close();
  });

  /** The board open and showing every rate of `keys` (the default list unless given), in `mode`. */
  async function board(width: number, height: number, options: { mode?: 'tv' | 'page'; base?: string; record?: boolean } = {}) {
    const opened = await rig.open(width, height, options.base);
    if (options.record) await recordEventsAndFlashes(opened.page);
    const mode = options.mode === 'page' ? '' : 'mode=tv&';
    await opened.page.goto(`${options.base ?? rig.base}/board?${mode}api_key=${rig.key}`, { waitUntil: 'load' });
    await opened.page.waitForSelector('#state[data-state="open"]', { timeout: HANG_MS });
    await opened.page.waitForFunction((count) => document.querySelectorAll('ul.board li .value').length === count, DEFAULT_KEYS.length, { timeout: HANG_MS });
    await opened.page.evaluate(() => document.fonts.ready);
    return opened;
  }

  // A price at least 2.5 % of the screen's width: 48 px at 1920, 96 px at 3840 (4K draws the same size
  // with twice the pixels), 32 px on a 1280 px screen. On a 55-inch full-HD TV a 48 px figure is about
  // 2 cm tall, which reads from about 3 m, across a shop's counter; with the default ten rates the board
  // reaches well past it (the sizes are logged).
  for (const [width, height] of [
    [1280, 720],
    [1920, 1080],
    [3840, 2160],
  ] as const) {
    it(`at ${width}×${height} fills the screen with prices in large Persian figures, and nothing to scroll`, async () => {
      const { page, problems, close } = await board(width, height);
      assert.equal(page.url(), `${rig.base}/board?mode=tv`, 'the key taken out of the address, the mode kept');
      await page.screenshot({ path: join(ARTIFACTS, `board-tv-${width}.png`) });

      const measured = await page.evaluate(() => ({
        scrollWidth: document.documentElement.scrollWidth,
        scrollHeight: document.documentElement.scrollHeight,
        tiles: [...document.querySelectorAll<HTMLElement>('ul.board li')].map((li) => {
          const value = li.querySelector<HTMLElement>('.value')!;
          const box = li.getBoundingClientRect();
          return { key: li.dataset.key!, size: parseFloat(getComputedStyle(value).fontSize), clipped: value.scrollWidth > value.clientWidth, text: value.textContent!, box: { left: box.left, top: box.top, right: box.right, bottom: box.bottom } };
        }),
        hidden: ['form', '.note', 'main > .en'].filter((selector) => document.querySelector<HTMLElement>(selector)!.offsetParent === null),
        updated: document.getElementById('updated')!.innerText,
      }));
      assert.ok(measured.scrollWidth <= width, `scrolls sideways: ${measured.scrollWidth} px wide in ${width}`);
      assert.ok(measured.scrollHeight <= height, `scrolls down: ${measured.scrollHeight} px high in ${height}`);
      assert.deepEqual(measured.hidden, ['form', '.note', 'main > .en'], 'connected, the board shows no form and no explanations');
      assert.match(measured.updated, PERSIAN_TIME, 'the time of the last update, in Persian digits');
      assert.doesNotMatch(measured.updated, /[0-9]/);

      const sizes = measured.tiles.map((tile) => tile.size);
      for (const tile of measured.tiles) {
        assert.ok(tile.size >= width * 0.025, `${tile.key}: a ${tile.size} px price at ${width} px`);
        assert.ok(!tile.clipped, `${tile.key}: "${tile.text}" is cut off`);
        assert.match(tile.text, /^[۰-۹٬٫]+$/, `${tile.key}: the price in Persian figures`);
        assert.ok(tile.box.left >= 0 && tile.box.top >= 0 && tile.box.right <= width && tile.box.bottom <= height, `${tile.key}: inside the screen`);
      }
      assert.equal(await page.locator('li[data-key="usd_free"] .value').innerText(), await persian(page, levels.usd_free as number));
      // Filled: the tiles reach across the screen and down to its foot.
      const right = Math.max(...measured.tiles.map((tile) => tile.box.right));
      const left = Math.min(...measured.tiles.map((tile) => tile.box.left));
      const bottom = Math.max(...measured.tiles.map((tile) => tile.box.bottom));
      assert.ok(right - left >= width * 0.95, `the tiles span ${right - left} of ${width} px`);
      assert.ok(bottom >= height * 0.95, `the tiles end ${height - bottom} px above the foot`);
      console.log(`# ${width}×${height}: prices ${Math.min(...sizes)}–${Math.max(...sizes)} px, page ${measured.scrollWidth}×${measured.scrollHeight}`);
      assert.deepEqual(problems, []);
      await close();
    });
  }

  for (const mode of ['tv', 'page'] as const) {
    it(`${mode === 'tv' ? 'TV mode' : 'the ordinary board'}: a stale price is dimmed with its age, and only a price that changed flashes`, async () => {
      const { page, problems, close } = await board(1920, 1080, { mode, record: true });
      const stale = page.locator(`li[data-key="${STALE_KEY}"]`);
      assert.equal(await stale.getAttribute('data-status'), 'stale');
      const age = await stale.locator('.age').innerText();
      // A comma after «کهنه»: a middle dot beside Persian digits reads as a zero («۴ دقیقه» as «۴۰»).
      assert.match(age, /^کهنه، [۰-۹]+ دقیقه پیش$/, 'its age, in Persian digits');
      assert.doesNotMatch(age, /[·•.٠]/, 'no dot beside the figures, where it reads as a zero');
      const minutes = Number(ascii(age).replace(/\D/g, ''));
      assert.ok(minutes >= STALE_MINUTES && minutes <= STALE_MINUTES + 1, `${age}: the value's age`);
      const opacity = (selector: string) => page.locator(selector).evaluate((element) => Number(getComputedStyle(element).opacity));
      assert.ok((await opacity(`li[data-key="${STALE_KEY}"] .value`)) <= 0.5, 'the stale price is dimmed');
      assert.equal(await opacity('li[data-key="usd_free"] .value'), 1, 'a fresh one is not');
      assert.equal(await opacity(`li[data-key="${STALE_KEY}"] .age`), 1, 'its age is not');

      // The stale price comes again every second with its age grown: three times, and never a flash.
      await page.waitForFunction((key) => (window as unknown as { seen: { received: string[] } }).seen.received.filter((k) => k === key).length >= 3, STALE_KEY, { timeout: HANG_MS });
      assert.deepEqual((await seen(page)).flashed, [], 'nothing flashed while only the stale price was sent again');

      // The dollar moves: it flashes, and nothing else does.
      rig.writeAlpha({ ...levels, usd_free: (levels.usd_free as number) + 1000 });
      await page.waitForFunction(() => (window as unknown as { seen: { flashed: string[] } }).seen.flashed.includes('usd_free'), undefined, { timeout: HANG_MS });
      assert.equal(await page.locator('li[data-key="usd_free"] .value').innerText(), await persian(page, (levels.usd_free as number) + 1000));
      // Two more sendings of the stale price after the dollar's: still only the dollar flashed.
      const sentBefore = (await seen(page)).received.filter((key) => key === STALE_KEY).length;
      await page.waitForFunction(([key, count]) => (window as unknown as { seen: { received: string[] } }).seen.received.filter((k) => k === key).length >= count, [STALE_KEY, sentBefore + 2] as const, { timeout: HANG_MS });
      const { received, flashed } = await seen(page);
      assert.ok(received.filter((key) => key === STALE_KEY).length >= 5, 'the stale price kept coming');
      assert.deepEqual([...new Set(flashed)], ['usd_free'], 'only the price that changed flashed');
      await page.screenshot({ path: join(ARTIFACTS, `board-${mode}-stale.png`) });
      rig.writeAlpha(levels);
      assert.deepEqual(problems, []);
      await close();
    });

    it(`${mode === 'tv' ? 'TV mode' : 'the ordinary board'}: with the server out of reach the whole board says since when, until it is back`, async () => {
      const proxy = new TcpProxy('127.0.0.1', Number(new URL(rig.base).port));
      const address = `http://127.0.0.1:${await proxy.start()}`;
      const { page, problems, close } = await board(1920, 1080, { mode, base: address });
      const banner = page.locator('#lost');
      assert.equal(await banner.isVisible(), false);

      const cut = Date.now();
      await proxy.stop();
      await page.waitForSelector('#state[data-state="reconnecting"]', { timeout: HANG_MS });
      assert.equal(await banner.isVisible(), false, 'a moment’s cut (a planned reconnect) fills no banner');
      await banner.waitFor({ state: 'visible', timeout: LOST_AFTER_MS + HANG_MS });
      const text = await banner.innerText();
      assert.match(text, /اتصال قطع است از ساعت [۰-۹]{2}:[۰-۹]{2}:[۰-۹]{2}/);
      assert.ok(apart(persianSeconds(text), tehranSeconds(cut)) <= 2, `"${text}": the time of the cut on the service's clock (${new Date(cut).toISOString()})`);
      assert.equal(await page.evaluate(() => document.documentElement.dataset.link), 'lost');
      const dimmed = await page.locator('ul.board').evaluate((board) => Number(getComputedStyle(board).opacity));
      assert.ok(dimmed <= 0.5, `the board is dimmed (opacity ${dimmed})`);
      await page.screenshot({ path: join(ARTIFACTS, `board-${mode}-lost.png`) });

      await proxy.start();
      await banner.waitFor({ state: 'hidden', timeout: HANG_MS });
      await page.waitForSelector('#state[data-state="open"]', { timeout: HANG_MS });
      assert.equal(await page.evaluate(() => document.documentElement.dataset.link), undefined, 'the board is no longer dimmed');
      // While it was cut, the browser reported each refused reconnect itself; nothing else may go wrong.
      assert.deepEqual(
        problems.filter((problem) => !/ERR_CONNECTION_REFUSED|ERR_CONNECTION_RESET|EventSource/.test(problem)),
        [],
      );
      await close();
      await proxy.stop();
    });
  }

  it('TV mode behind the shipped HAProxy: the node away (503s), the board says so and keeps trying until it is back', async () => {
    const node = new TcpProxy('127.0.0.1', Number(new URL(rig.base).port));
    const dir = tempDir('nerkh-board-proxy-');
    const haproxy = await startShippedProxy(await node.start(), dir.path);
    try {
      const address = `http://127.0.0.1:${haproxy.port}`;
      const { page, problems, close } = await board(1920, 1080, { base: address });
      const asked: string[] = [];
      page.on('request', (request) => {
        if (request.method() === 'HEAD') asked.push(request.url());
      });

      await node.stop();
      await page.locator('#lost').waitFor({ state: 'visible', timeout: LOST_AFTER_MS + HANG_MS });
      assert.match(await page.locator('#lost').innerText(), /اتصال قطع است از ساعت [۰-۹]{2}:[۰-۹]{2}:[۰-۹]{2}/);
      // EventSource closed on the proxy's 503; the page asked why (HEAD) and went on trying, the board kept.
      await page.waitForFunction(() => document.querySelector('#state')?.getAttribute('data-state') === 'reconnecting');
      assert.ok(asked.length >= 1, 'the page asked the proxy why the stream was refused');
      assert.equal(await page.locator('ul.board li').count(), DEFAULT_KEYS.length, 'the prices stay on the board, dimmed');
      assert.equal(await page.locator('#message').isVisible(), false, 'a server away is not a refused key');

      await node.start();
      // HAProxy sees the node back after two health checks (2 s apart); the page tries every 5 s.
      await page.locator('#lost').waitFor({ state: 'hidden', timeout: HANG_MS });
      await page.waitForSelector('#state[data-state="open"]', { timeout: HANG_MS });
      assert.deepEqual(
        problems.filter((problem) => !/ 50[23] |EventSource/.test(problem)),
        [],
      );
      await close();
    } finally {
      await haproxy.stop();
      await node.stop();
      dir.cleanup();
    }
  });
});

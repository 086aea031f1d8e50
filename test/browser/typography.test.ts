/**
 * The pages' type in a real browser (Debian's Chromium): the font the server
 * ships is the one drawing Persian (the decimal separator «٫» included), and
 * lines that mix Persian with English and numbers come out in reading order.
 * Order is read from the layout itself: where each fragment of a line is drawn
 * (Range boxes), left to right.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { watchedPage } from './chromium.js';
import { spend, startPageRig, type PageRig } from './page-rig.js';
import { HANG_MS } from '../support/deadline.js';

/** A fragment to find in a line: its text, or [a name for it, its text] when the text repeats (a full stop). */
type Part = string | [name: string, text: string];

interface Box {
  name: string;
  left: number;
  right: number;
  top: number;
  bottom: number;
}

/**
 * Where each part is drawn, the parts found one after another in the text of
 * the first element matching `selector` (so a repeated "." is told apart by
 * what comes before it).
 */
async function boxes(page: Page, selector: string, parts: Part[]): Promise<Box[]> {
  const wanted = parts.map((part) => (typeof part === 'string' ? [part, part] : part));
  // No named helper inside: the test's compiler would wrap it in a call the page does not have.
  return page.locator(selector).first().evaluate((root, wanted) => {
    const nodes: Text[] = [];
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) nodes.push(node as Text);
    const starts: number[] = [];
    let length = 0;
    for (const node of nodes) {
      starts.push(length);
      length += node.data.length;
    }
    const text = nodes.map((node) => node.data).join('');
    let cursor = 0;
    return wanted.map(([name, part]) => {
      const start = text.indexOf(part!, cursor);
      if (start < 0) throw new Error(`${JSON.stringify(part)} not found after ${cursor} in ${JSON.stringify(text)}`);
      cursor = start + part!.length;
      // A start lies in the node holding its first character, an end in the one holding its last.
      let first = 0;
      while (first + 1 < nodes.length && starts[first + 1]! <= start) first++;
      let last = first;
      while (last + 1 < nodes.length && starts[last + 1]! < cursor) last++;
      const range = document.createRange();
      range.setStart(nodes[first]!, start - starts[first]!);
      range.setEnd(nodes[last]!, cursor - starts[last]!);
      const rect = range.getBoundingClientRect();
      return { name: name!, left: rect.left, right: rect.right, top: rect.top, bottom: rect.bottom };
    });
  }, wanted);
}

/** The parts' names as they stand on the line, left to right; all on one line, none overlapping the next. */
function leftToRight(drawn: Box[]): string[] {
  const sorted = [...drawn].sort((a, b) => a.left - b.left);
  const detail = JSON.stringify(sorted.map(({ name, left, right }) => [name, Math.round(left), Math.round(right)]));
  // One line: every box's middle within the first's height (the English asides are set a little smaller).
  for (const box of sorted) assert.ok(Math.abs((box.top + box.bottom) / 2 - (sorted[0]!.top + sorted[0]!.bottom) / 2) < (sorted[0]!.bottom - sorted[0]!.top) / 2, `one line: ${detail}`);
  for (let i = 1; i < sorted.length; i++) assert.ok(sorted[i]!.left >= sorted[i - 1]!.right - 0.5, `no overlap: ${detail}`);
  return sorted.map((box) => box.name);
}

describe('the pages\' type in Chromium', () => {
  let rig: PageRig | undefined;
  let browser: Browser;
  let base: string;
  let key: string;

  before(async () => {
    rig = await startPageRig('type-user', 'pro');
    ({ browser, base, key } = rig);
    await spend(rig, '/v1/rates/usd_free', 2);
    await spend(rig, '/v1/rates/no_such_key', 1);
  });
  after(() => rig?.close());

  /**
   * Open `path` at 1280 px; `done` fails on any console error, policy violation or request outside this
   * server, but the `expected` ones.
   */
  async function visit(path: string, expected: string[] = []) {
    const { context, page, problems } = await watchedPage(browser, base, 1280);
    const fonts: string[] = [];
    page.on('request', (request) => {
      if (request.resourceType() === 'font') fonts.push(request.url());
    });
    await page.goto(`${base}${path}`, { waitUntil: 'networkidle' });
    return {
      page,
      fonts,
      done: async () => {
        assert.deepEqual(problems, expected, path);
        await context.close();
      },
    };
  }

  async function showAccount(page: Page, withKey: string): Promise<void> {
    await page.fill('#key', withKey);
    await page.click('button[type="submit"]');
  }

  for (const path of ['/', '/status', '/account', '/board']) {
    it(`${path} draws its Persian, «٫» included, with the font this server ships`, async () => {
      const { page, fonts, done } = await visit(path);
      const faces = await page.evaluate(async () => {
        await document.fonts.ready;
        return { faces: [...document.fonts].map((face) => ({ family: face.family.replace(/"/g, ''), status: face.status })), check: document.fonts.check('16px Vazirmatn') };
      });
      assert.deepEqual(faces.faces, [{ family: 'Vazirmatn', status: 'loaded' }], 'one face, loaded');
      assert.equal(faces.check, true, 'document.fonts.check');
      assert.equal(fonts.length, 1, `one font request: ${fonts.join(', ')}`);
      assert.match(fonts[0]!, new RegExp(`^${base}/fonts/vazirmatn-[0-9a-f]{16}\\.woff2$`));

      // The font the browser really drew a decimal figure with (not merely the one the style sheet asked for).
      // On the body (a page may redraw its main), and queried only once a frame has laid it out.
      await page.evaluate(async () => {
        const probe = document.createElement('span');
        probe.id = 'probe';
        probe.textContent = '۱۲٫۵';
        document.body.append(probe);
        await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
      });
      const cdp = await page.context().newCDPSession(page);
      const { root } = await cdp.send('DOM.getDocument');
      const { nodeId } = await cdp.send('DOM.querySelector', { nodeId: root.nodeId, selector: '#probe' });
      await cdp.send('CSS.enable');
      const { fonts: drawnWith } = await cdp.send('CSS.getPlatformFontsForNode', { nodeId });
      assert.deepEqual(
        drawnWith.map((font) => ({ family: font.familyName, custom: font.isCustomFont, glyphs: font.glyphCount })),
        [{ family: 'Vazirmatn', custom: true, glyphs: 4 }],
        'every glyph of «۱۲٫۵» from the bundled font',
      );
      await done();
    });
  }

  it('/account: the allowance line reads "در دقیقه ۶۰۰ (600 per minute)", the English whole and in its own order', async () => {
    const { page, done } = await visit('/account');
    await showAccount(page, key);
    await page.waitForSelector('#report:not([hidden])', { timeout: HANG_MS });
    const allowance = '#summary dd:nth-of-type(3)';
    assert.match(await page.locator(allowance).innerText(), /^در دقیقه ۶۰۰ \(600 per minute\)، در روز/);
    const order = leftToRight(await boxes(page, allowance, ['در دقیقه', '۶۰۰', '(', '600', 'per minute', ')', '،', 'در روز']));
    // Right to left in Persian; the English island left to right inside it, its parentheses around it.
    assert.deepEqual(order, ['در روز', '،', '(', '600', 'per minute', ')', '۶۰۰', 'در دقیقه']);
    await done();
  });

  it('/account: "This period" keeps each count with its word and the closing parenthesis at the English end', async () => {
    const { page, done } = await visit('/account');
    await showAccount(page, key);
    await page.waitForSelector('#report:not([hidden])', { timeout: HANG_MS });
    const period = '#summary dd:nth-of-type(5)';
    const [, total, failed] = /\((\d+) requests, (\d+) errors\)/.exec(await page.locator(period).innerText()) ?? [];
    assert.ok(total && failed, await page.locator(period).innerText());
    const order = leftToRight(await boxes(page, period, ['درخواست', 'خطا', '(', ['total', total], 'requests,', ['failed', failed], 'errors', ')']));
    assert.deepEqual(order, ['(', 'total', 'requests,', 'failed', 'errors', ')', 'خطا', 'درخواست']);
    await done();
  });

  it('/account: the period chosen reads "۳۰ روز · 30 days" (not "days 30")', async () => {
    const { page, done } = await visit('/account');
    // A select draws its chosen option's text in its own direction; the same text set in a line of the page shows how.
    await page.evaluate(() => {
      const select = document.querySelector<HTMLSelectElement>('#days')!;
      const line = document.createElement('div');
      line.id = 'chosen';
      line.textContent = select.selectedOptions[0]!.textContent;
      select.form!.after(line);
    });
    assert.deepEqual(leftToRight(await boxes(page, '#chosen', ['۳۰', 'روز', '·', '30', 'days'])), ['30', 'days', '·', 'روز', '۳۰']);
    await done();
  });

  it('/account: a refused key\'s message keeps each full stop at the end of its own sentence', async () => {
    const { page, done } = await visit('/account', ['console: Failed to load resource: the server responded with a status of 401 (Unauthorized)']);
    await showAccount(page, `nrk_${'Q'.repeat(32)}`);
    await page.waitForSelector('#message:not([hidden])', { timeout: HANG_MS });
    assert.equal(await page.locator('#message').innerText(), 'کلید نامعتبر است. The API key is unknown, revoked or expired.');
    const order = leftToRight(await boxes(page, '#message', ['کلید', 'است', ['Persian stop', '.'], 'The API key', 'expired', ['English stop', '.']]));
    assert.deepEqual(order, ['The API key', 'expired', 'English stop', 'Persian stop', 'است', 'کلید']);
    await done();
  });

  it('/status: "این صفحه هر ۱۰ ثانیه به‌روز می‌شود. This page refreshes every 10 seconds." in reading order', async () => {
    const { page, done } = await visit('/status');
    const footer = 'main > p.meta:last-of-type';
    const order = leftToRight(await boxes(page, footer, ['این صفحه', '۱۰', 'شود', ['Persian stop', '.'], 'This page', '10', 'seconds', ['English stop', '.']]));
    assert.deepEqual(order, ['This page', '10', 'seconds', 'English stop', 'Persian stop', 'شود', '۱۰', 'این صفحه']);
    await done();
  });
});

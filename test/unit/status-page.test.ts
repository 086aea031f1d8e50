import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../src/domain/clock.js';
import { ZoneTime } from '../../src/domain/time.js';
import { PUBLIC_ENDPOINTS, type ServiceStatus } from '../../src/render/service-status.js';
import type { SourceHealth } from '../../src/sources/monitor.js';
import { NO_UNKNOWN_KEYS } from '../../src/sources/unknown-keys.js';
import { PUBLIC_UNKNOWN_KEYS, renderStatusPage, sparkline, STATUS_STYLE } from '../../src/web/status-page.js';
import { holidaysOf } from '../../src/catalogue/holidays.js';
import { MarketCalendar } from '../../src/domain/market-calendar.js';
import { defaultMarketRules } from '../../src/domain/market-specs.js';

// 2026-11-22T10:00:00+03:30 is 1 Azar 1405.
const NOW = Date.parse('2026-11-22T06:30:00Z');
const time = new ZoneTime('Asia/Tehran', new ManualClock(NOW));

function source(name: string, fields: Partial<SourceHealth>): SourceHealth {
  return { name, state: 'active', last_update: NOW - 125_000, age_seconds: 125, error: null, last_check: NOW - 1000, dropped: 0, out_of_range: 0, outliers: 0, held: 0, outliers_total: 0, unknown_keys: NO_UNKNOWN_KEYS, format: 'nerkh', mapped: 1, dropped_reasons: [], ...fields };
}

function status(state: ServiceStatus['service']['state'], message: string, sources: SourceHealth[]): ServiceStatus {
  return {
    service: { state, message },
    last_check: NOW - 1000,
    last_update: NOW - 125_000,
    endpoints: PUBLIC_ENDPOINTS.map((e) => ({ ...e, state })),
    store: { reachable: true, since: NOW - 3_600_000, error: null },
    sources,
    nodes: [],
    redis: null,
    history: { state, minuteDays: 90, lastWritten: NOW - 42_000, recording: true, pending: 0 },
    stream: { state, open: 3 },
  };
}

/** The page's visible text, tags dropped. */
const text = (html: string) => html.replace(/<style>[\s\S]*?<\/style>/, '').replace(/<[^>]+>/g, ' ');

describe('public status page', () => {
  it("shows each market's state and next opening in Persian and English", () => {
    // Friday 2026-11-20, 12:00 Tehran: tehran closed until Saturday 00:00, the others open.
    const friday = Date.parse('2026-11-20T12:00:00+03:30');
    const rules = defaultMarketRules(holidaysOf);
    const markets = [rules.tehran, rules.international, rules.crypto].map((market) => new MarketCalendar(market).stateAt(friday));
    const page = renderStatusPage(status('active', 'all services active', [source('alpha', {})]), time, NOW, () => null, markets);
    const visible = text(page);
    assert.match(visible, /بازارها\s+Markets/);
    const tehran = text(/<tr data-market="tehran">[\s\S]*?<\/tr>/.exec(page)![0]);
    assert.match(tehran, /بازار تهران/);
    assert.match(tehran, /بسته: جمعه/);
    assert.match(tehran, /closed: Friday/);
    assert.match(tehran, /۱۴۰۵\/۰۸\/۳۰ ۰۰:۰۰:۰۰/, 'opens Saturday 00:00 (30 Aban), in Persian');
    assert.match(tehran, /2026-11-21T00:00:00\+03:30/, 'and in English');
    const crypto = text(/<tr data-market="crypto">[\s\S]*?<\/tr>/.exec(page)![0]);
    assert.match(crypto, /باز\s+open/);
  });

  it('shows Jalali dates with Persian digits, the ISO time in English, and ages in both languages', () => {
    const page = renderStatusPage(status('active', 'all services active', [source('alpha', {})]), time, NOW);
    assert.ok(page.includes('۱۴۰۵/۰۹/۰۱ ۰۹:۵۷:۵۵'), 'last update as a Jalali date with Persian digits');
    assert.ok(page.includes('2026-11-22T09:57:55+03:30'), 'and as ISO in the English part');
    assert.ok(page.includes('۲ دقیقه پیش'), 'age in Persian words and digits');
    assert.ok(page.includes('2 minutes ago'), 'age in English');
    assert.match(STATUS_STYLE, /\.date \{ white-space: nowrap; \}/, 'dates do not wrap');
    assert.ok(page.includes('<link rel="stylesheet" href="/status/status.css">'), 'the page takes its style sheet');
    const persian = [...page.matchAll(/<span class="date">([^<]*)<\/span>/g)].map((m) => m[1]!);
    assert.ok(persian.length >= 4, 'Persian dates and ages are marked');
    for (const part of persian) assert.doesNotMatch(part, /[0-9]/, `Latin digits in Persian text: ${part}`);
  });

  it('says the banner once', () => {
    const page = text(renderStatusPage(status('active', 'all services active', [source('alpha', {})]), time, NOW));
    assert.equal(page.match(/all services active/gi)?.length, 1, page);
    const degraded = text(renderStatusPage(status('degraded', 'degraded: alpha degraded', [source('alpha', { state: 'degraded', error: '2 values out of range' })]), time, NOW));
    assert.match(degraded, /Some services are degraded: alpha degraded/);
    assert.doesNotMatch(degraded, /degraded: degraded/);
  });

  it('maps source errors to public reasons; raw parser messages never reach the page', () => {
    const raw = 'invalid JSON: Unexpected token } in JSON at position 17';
    const page = renderStatusPage(
      status('degraded', 'degraded: alpha degraded, beta down', [
        source('alpha', { state: 'degraded', error: raw }),
        source('beta', { state: 'down', error: 'HTTP 502' }),
        source('gamma', { state: 'degraded', error: 'data older than 600 s; 3 values dropped' }),
      ]),
      time,
      NOW,
    );
    assert.ok(!page.includes('Unexpected token'), 'the parser message is not shown');
    assert.ok(page.includes('سند نامعتبر') && page.includes('invalid document'), 'page.includes(\'سند نامعتبر\') && page.includes(\'invalid document\')');
    // The status code is the reason (the source was reached); nothing else of the upstream's answer is shown.
    assert.ok(page.includes('منبع با خطای HTTP ۵۰۲ پاسخ داد') && page.includes('source answered HTTP 502'), 'page.includes(\'منبع با خطای HTTP ۵۰۲ پاسخ داد\') && page.includes(\'source answered HTTP 502\')');
    assert.ok(page.includes('داده قدیمی‌تر از ۶۰۰ ثانیه') && page.includes('3 values dropped'), 'known reasons keep their counts');
  });
});

describe('status page: item keys that match no reference', () => {
  it('counts them beside the source, in both languages, and names those shaped like keys, never other text', () => {
    const page = renderStatusPage(
      status('active', 'all services active', [source('alpha', { unknown_keys: { count: 4, sample: ['usd_fre', '<b>eur</b>', 'gold', 'a key with spaces'] } }), source('beta', { error: '2 values dropped', unknown_keys: { count: 1, sample: ['x_1'] } })]),
      time,
      NOW,
    );
    const visible = text(page).replace(/\s+/g, ' ');
    assert.ok(visible.includes('۴ کلید بدون مرجع نادیده گرفته شد: usd_fre ، gold ، …'), visible);
    assert.ok(visible.includes('4 item keys match no reference: usd_fre , gold , …'), visible);
    assert.ok(page.includes('<code dir="ltr">usd_fre</code>'), 'a key reads left to right inside the Persian line');
    assert.ok(visible.includes('2 values dropped; 1 item key matches no reference: x_1 '), 'beside any other reason');
    for (const hidden of ['eur', '<b>', 'spaces']) assert.ok(!page.includes(hidden), `the page shows "${hidden}", which is no key`);
  });

  it(`names at most ${PUBLIC_UNKNOWN_KEYS}, then says there are more`, () => {
    const sample = Array.from({ length: 20 }, (_, i) => `typo_${i}`);
    const visible = text(renderStatusPage(status('active', 'all services active', [source('alpha', { unknown_keys: { count: 40, sample } })]), time, NOW)).replace(/\s+/g, ' ');
    assert.ok(visible.includes(`40 item keys match no reference: ${sample.slice(0, PUBLIC_UNKNOWN_KEYS).join(' , ')} , …`), visible);
    assert.ok(!visible.includes(`typo_${PUBLIC_UNKNOWN_KEYS} `), 'no more than the bound');
  });
});

describe('status page sparkline', () => {
  it('gives each source its format and items mapped and dropped, reasons in fixed phrases, keys never named', () => {
    const drops = [
      { reason: 'no_match' as const, count: 1, source_keys: ['ir_fx_free_usd_sell'] },
      { reason: 'not_a_number' as const, count: 2, source_keys: ['ir_fx_free_gbp', '<i>x</i>'] },
    ];
    const page = renderStatusPage(status('active', 'all services active', [source('feed', { format: 'mapping', mapped: 12, dropped: 3, dropped_reasons: drops, error: '3 values dropped' }), source('ecb', { format: 'ecb', mapped: 2 })]), time, NOW);
    const visible = text(page);
    assert.ok(visible.includes('JSON mapping: 12 mapped, 3 dropped (path matched nothing 1, not a number 2)'), visible);
    assert.ok(visible.includes('نگاشت JSON: ۱۲ مقدار خوانده شد، ۳ کنار گذاشته شد (مسیر به مقداری نرسید ۱، مقدار عدد نیست ۲)'), 'visible.includes(\'نگاشت JSON: ۱۲ مقدار خوانده شد، ۳ کنار گذاشته شد (مسیر به مقداری نرسید ۱، مقدار عدد نیست ۲)\')');
    assert.ok(visible.includes('ECB reference rates: 2 mapped'), 'visible.includes(\'ECB reference rates: 2 mapped\')');
    assert.ok(page.includes('data-label="اقلام · Items"'), 'page.includes(\'data-label="اقلام · Items"\')');
    for (const key of ['ir_fx_free_usd_sell', 'ir_fx_free_gbp', '<i>x</i>']) assert.ok(!page.includes(key), `the page names "${key}"`);
  });

  it('scales the series to the chart, oldest on the left', () => {
    const series = Array.from({ length: 36 }, (_, i) => (i === 35 ? 10 : i === 0 ? 5 : 0));
    const svg = sparkline(series);
    const points = /points="([^"]+)"/.exec(svg)![1]!.split(' ').map((p) => p.split(',').map(Number));
    assert.equal(points.length, 36);
    assert.deepEqual(points[0], [0, 14]);
    assert.deepEqual(points[35], [144, 2]);
    assert.deepEqual(points[10], [41.1, 26]);
    assert.match(svg, /aria-label="15 values served in the last 6 hours"/);
  });
});

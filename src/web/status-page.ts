import { createHash } from 'node:crypto';
import type { MarketState } from '../domain/market-calendar.js';
import { formatAge, type ZoneTime } from '../domain/time.js';
import type { ServiceStatus } from '../render/service-status.js';
import type { DropCount } from '../sources/drops.js';
import type { FormatName } from '../sources/formats/spec.js';
import type { DerivedDetail, SourceHealth } from '../sources/health.js';
import type { SourceState } from '../sources/monitor.js';
import type { UnknownKeys } from '../sources/unknown-keys.js';
import { jalaliDateTime, persianAge, persianDigits } from './persian.js';
import { publicItems, publicReasons } from './public-reasons.js';

const REFRESH_SECONDS = 10;

const STATE_TEXT: Record<SourceState, { fa: string; en: string }> = {
  active: { fa: 'فعال', en: 'active' },
  degraded: { fa: 'مختل', en: 'degraded' },
  down: { fa: 'از کار افتاده', en: 'down' },
};

const BANNER: Record<SourceState, { fa: string; en: string }> = {
  active: { fa: 'همه سرویس‌ها فعال هستند', en: 'All services active' },
  degraded: { fa: 'برخی سرویس‌ها با اختلال کار می‌کنند', en: 'Some services are degraded' },
  down: { fa: 'سرویس در دسترس نیست', en: 'Service down' },
};

const ENDPOINT_TITLES: Record<string, string> = {
  catalogue: 'فهرست مراجع',
  detail: 'جزئیات نرخ‌ها',
  history: 'تاریخچه نرخ‌ها',
  stream: 'جریان زنده',
  status: 'وضعیت سرویس',
  usage: 'گزارش مصرف',
  webservice: 'وب‌سرویس قدیمی',
};

/** Unknown item keys the public page names, at most: enough to spot a typo, few enough to keep the row short. */
export const PUBLIC_UNKNOWN_KEYS = 5;
/** A key is named on the public page only if it is shaped like a catalogue key; any other text from the document is counted, never shown. */
const KEY_SHAPE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/**
 * A source's `error` for the public: fixed reasons in Persian and English, never the raw message
 * (that stays in the logs). Item keys that match no reference are counted, and the first few that
 * are shaped like catalogue keys are named, so an operator sees a typo where the quick start sends
 * them; other text of the document (an HTTP source's is not ours) is never repeated.
 */
function sourceError(error: string | null, unknown: UnknownKeys): string {
  const reasons = publicReasons(error);
  const fa = reasons.map((r) => escape(r.fa));
  const en = reasons.map((r) => escape(r.en));
  if (unknown.count > 0) {
    const named = unknown.sample.filter((key) => KEY_SHAPE.test(key)).slice(0, PUBLIC_UNKNOWN_KEYS);
    const list = named.map((key) => `<code dir="ltr">${escape(key)}</code>`);
    const more = unknown.count > named.length ? '…' : '';
    const faNames = named.length > 0 ? `: ${list.join('، ')}${more ? '، …' : ''}` : '';
    const enNames = named.length > 0 ? `: ${list.join(', ')}${more ? ', …' : ''}` : '';
    fa.push(`${persianDigits(unknown.count)} کلید بدون مرجع نادیده گرفته شد${faNames}`);
    en.push(`${unknown.count} item ${unknown.count === 1 ? 'key matches' : 'keys match'} no reference${enNames}`);
  }
  if (fa.length === 0) return '—';
  return `${fa.join('؛ ')}<div class="en">${en.join('; ')}</div>`;
}

/** A source's format and its items mapped and dropped, with fixed phrases for the reasons (the keys stay on the keyed /v1/status). */
function items(s: { format: FormatName; mapped: number; dropped_reasons: readonly DropCount[] }): string {
  const text = publicItems(s.format, s.mapped, s.dropped_reasons);
  return `${escape(text.fa)}<div class="en">${escape(text.en)}</div>`;
}

/** The derived source's items: how many of its formulas gave a value. */
function derivedItems(detail: DerivedDetail): string {
  const fa = `فرمول: ${persianDigits(detail.computed)} از ${persianDigits(detail.references)} مرجع محاسبه شد`;
  const en = `formulas: ${detail.computed} of ${detail.references} ${detail.references === 1 ? 'reference' : 'references'} computed`;
  return `${escape(fa)}<div class="en">${escape(en)}</div>`;
}

/** Which inputs hold the derived source back, by reference key (catalogue keys, public on every rate). */
function derivedInputs(detail: DerivedDetail): string {
  const keys = (list: readonly string[]) => list.map((key) => `<code dir="ltr">${escape(key)}</code>`).join(' ');
  const fa: string[] = [];
  const en: string[] = [];
  if (detail.stale_inputs.length > 0) {
    fa.push(`ورودی کهنه: ${keys(detail.stale_inputs)}`);
    en.push(`stale ${detail.stale_inputs.length === 1 ? 'input' : 'inputs'}: ${keys(detail.stale_inputs)}`);
  }
  if (detail.missing_inputs.length > 0) {
    fa.push(`ورودی بدون مقدار: ${keys(detail.missing_inputs)}`);
    en.push(`${detail.missing_inputs.length === 1 ? 'input' : 'inputs'} without a value: ${keys(detail.missing_inputs)}`);
  }
  return fa.length === 0 ? '—' : `${fa.join('؛ ')}<div class="en">${en.join('; ')}</div>`;
}

/** A source's items and error cells: the derived source says what its formulas gave and which inputs are stale. */
function itemsAndError(s: SourceHealth): [string, string] {
  if (s.format !== 'formula') return [items({ format: s.format, mapped: s.mapped, dropped_reasons: s.dropped_reasons }), sourceError(s.error, s.unknown_keys)];
  return s.derived ? [derivedItems(s.derived), derivedInputs(s.derived)] : ['—', '—'];
}

/** A moment in both languages: Jalali with Persian digits, then the ISO timestamp; neither wraps mid-date. */
function moment(ms: number | null, time: ZoneTime): string {
  if (ms === null) return '—';
  return `<span class="date">${jalaliDateTime(ms, time)}</span><div class="en date">${escape(time.format(ms))}</div>`;
}

function age(seconds: number | null): string {
  if (seconds === null) return 'هرگز<div class="en">never</div>';
  return `<span class="date">${persianAge(seconds)}</span><div class="en date">${escape(formatAge(seconds))}</div>`;
}

/** The English banner line, with the service's message only when it adds something. */
function bannerEnglish(state: SourceState, message: string): string {
  const detail = message.replace(/^degraded: /, '');
  return detail.toLowerCase() === BANNER[state].en.toLowerCase() || detail === 'all services active' ? BANNER[state].en : `${BANNER[state].en}: ${detail}`;
}

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function chart(series: number[] | null): string {
  return series ? sparkline(series) : '—';
}

function badge(state: SourceState): string {
  return `<span class="badge ${state}">${STATE_TEXT[state].fa} · ${STATE_TEXT[state].en}</span>`;
}

/**
 * A sparkline of a source's values served per ten minutes, inline SVG (no
 * script, nothing to fetch): a dip is the source lagging or broken while
 * another carries its references.
 */
export function sparkline(series: readonly number[]): string {
  const width = 144;
  const height = 28;
  const top = Math.max(1, ...series);
  const step = series.length > 1 ? width / (series.length - 1) : width;
  const points = series.map((count, i) => `${(i * step).toFixed(1)},${(height - 2 - (count / top) * (height - 4)).toFixed(1)}`).join(' ');
  const total = series.reduce((sum, count) => sum + count, 0);
  return (
    `<svg class="spark" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${total} values served in the last 6 hours">` +
    // A tooltip holds text only: the English half is isolated by U+2066…U+2069, so its parenthesis closes at its own end.
    `<title>${persianDigits(total)} مقدار در ۶ ساعت گذشته · \u2066${total} values served in the last 6 hours (per 10 minutes)\u2069</title>` +
    `<polyline points="${points}" fill="none" stroke="currentColor" stroke-width="1.5" stroke-linejoin="round"/></svg>`
  );
}

/**
 * A node as the public page names it: the random tail of its id (`…-3fa9c1`),
 * which an operator finds again in /v1/status and the logs; never the host
 * name and process id the id begins with. An id of another
 * shape shows as a short digest of itself.
 */
export function publicNodeName(id: string): string {
  return /-([0-9a-f]{6})$/.exec(id)?.[1] ?? createHash('sha256').update(id).digest('hex').slice(0, 6);
}

/** Candle recording: its state, how long minute candles are kept, the newest value written and how old it is, and what waits here to be written. */
function historyRow(history: ServiceStatus['history'], time: ZoneTime, now: number): string {
  const days = history.minuteDays;
  const written = history.lastWritten;
  return (
    `<tr><td data-label="وضعیت · State">${badge(history.state)}</td>` +
    `<td data-label="نگهداری · Kept">کندل‌های یک‌دقیقه‌ای ${persianDigits(days)} روز؛ ساعتی و روزانه همیشه<div class="en">One-minute candles ${days} days; hourly and daily for good</div></td>` +
    `<td id="last-candle" data-label="آخرین کندل نوشته‌شده · Last candle written">${moment(written, time)}</td>` +
    `<td data-label="عمر · Age">${written === null ? '—' : age(Math.max(0, Math.floor((now - written) / 1000)))}</td>` +
    `<td data-label="ثبت در این گره · Recorded here">${history.recording ? 'بله <span class="en">yes</span>' : 'خیر <span class="en">no</span>'}</td>` +
    `<td data-label="در انتظار نوشتن · Waiting to be written">${persianDigits(history.pending)}<div class="en">${history.pending}</div></td></tr>`
  );
}

function streamRow(stream: ServiceStatus['stream']): string {
  return (
    `<tr><td data-label="وضعیت · State">${badge(stream.state)}</td>` +
    `<td id="open-streams" data-label="جریان‌های باز در این گره · Open on this node">${persianDigits(stream.open)}<div class="en">${stream.open}</div></td></tr>`
  );
}

/** Persian names of the built-in markets; another market shows its config name. */
const MARKET_TITLES: Record<string, string> = { tehran: 'بازار تهران', international: 'بازارهای جهانی', crypto: 'رمزارزها' };

/** One market: open or closed and why, and when it opens next, in Persian and English. */
function marketRow(market: MarketState, time: ZoneTime): string {
  const state =
    market.state === 'open'
      ? 'باز <span class="en">open</span>'
      : `بسته${market.reason ? `: ${escape(market.reason.fa)}` : ''}<div class="en">closed${market.reason ? `: ${escape(market.reason.en)}` : ''}</div>`;
  const opens = market.state === 'open' ? '—' : market.opensAt === null || !Number.isFinite(market.opensAt) ? 'نامعلوم<div class="en">unknown</div>' : moment(market.opensAt, time);
  return (
    `<tr data-market="${escape(market.name)}"><td data-label="بازار · Market">${escape(MARKET_TITLES[market.name] ?? market.name)}<div class="en">${escape(market.name)}</div></td>` +
    `<td data-label="وضعیت · State">${state}</td><td data-label="بازگشایی · Opens">${opens}</td></tr>`
  );
}

/** The public status page: the same facts as /v1/status, for people, in Persian and English (node ids cut to what names no host). */
export function renderStatusPage(status: ServiceStatus, time: ZoneTime, now: number, activity: (source: string) => number[] | null = () => null, markets: readonly MarketState[] = []): string {
  const banner = BANNER[status.service.state];
  const endpoints = status.endpoints
    .map((e) => `<tr><td data-label="سرویس · Service">${escape(ENDPOINT_TITLES[e.name] ?? e.name)}<div class="en">${escape(e.name)}</div></td><td data-label="مسیر · Path" dir="ltr"><code>${escape(e.path)}</code></td><td data-label="وضعیت · State">${badge(e.state)}</td></tr>`)
    .join('');
  const store = status.store.reachable
    ? ''
    : `<p class="meta">${badge('down')} پایگاه داده در دسترس نیست؛ نرخ‌ها از حافظه ارائه می‌شوند و آمار مصرف نگه داشته می‌شود. <span class="en">The account store is unreachable since ${status.store.since === null ? 'start-up' : escape(time.format(status.store.since))}; rates are served from memory and usage is buffered.</span></p>`;
  const redis =
    status.redis === 'down'
      ? `<p class="meta">${badge('down')} Redis در دسترس نیست؛ هر گره آخرین داده خود را ارائه می‌دهد و سهم خود از سقف درخواست‌ها را اعمال می‌کند. <span class="en">Redis is unreachable; each node serves its latest data and limits each key to its share.</span></p>`
      : '';
  const nodes = status.nodes
    .map(
      (n) =>
        `<tr><td data-label="شناسه · Id" dir="ltr"><code>${escape(publicNodeName(n.id))}</code></td><td data-label="نقش · Role" dir="ltr">${escape(n.role)}</td><td data-label="دریافت داده · Ingest">${n.leader ? 'رهبر <span class="en">leader</span>' : '—'}</td>` +
        `<td data-label="نسخه · Version" dir="ltr">${n.version === null ? '—' : n.version}</td><td data-label="آخرین پیام · Last seen">${moment(n.last_seen, time)}</td></tr>`,
    )
    .join('');
  const sources = status.sources
    .map((s) => {
      const [itemsCell, errorCell] = itemsAndError(s);
      return (
        `<tr><td data-label="منبع · Source" dir="ltr">${escape(s.name)}</td><td data-label="وضعیت · State">${badge(s.state)}</td><td data-label="آخرین به‌روزرسانی · Last update">${moment(s.last_update, time)}</td>` +
        `<td data-label="عمر داده · Age">${age(s.age_seconds)}</td><td data-label="اقلام · Items">${itemsCell}</td><td data-label="خطا · Error">${errorCell}</td>` +
        `<td data-label="۶ ساعت گذشته · Last 6 hours" dir="ltr">${chart(activity(s.name))}</td></tr>`
      );
    })
    .join('');
  return `<!doctype html>
<html lang="fa" dir="rtl">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="refresh" content="${REFRESH_SECONDS}">
<title>وضعیت سرویس نرخ · Nerkh status</title>
<link rel="stylesheet" href="/status/status.css">
</head>
<body>
<main>
  <h1>وضعیت سرویس نرخ</h1>
  <div class="en">Nerkh service status</div>
  <div class="banner ${status.service.state}" role="status">
    <strong>${banner.fa}</strong>
    <span dir="ltr">${escape(bannerEnglish(status.service.state, status.service.message))}</span>
  </div>
  <dl class="meta">
    <dt>آخرین بررسی <span class="en">Last check</span></dt><dd>${moment(status.last_check, time)}</dd>
    <dt>آخرین به‌روزرسانی <span class="en">Last update</span></dt><dd>${moment(status.last_update, time)}</dd>
    <dt>تولید صفحه <span class="en">Generated</span></dt><dd>${moment(now, time)}</dd>
  </dl>
  ${store}
  ${redis}
  <h2>سرویس‌ها <span class="en">Endpoints</span></h2>
  <table><thead><tr><th>سرویس <div class="en">Service</div></th><th>مسیر <div class="en">Path</div></th><th>وضعیت <div class="en">State</div></th></tr></thead><tbody>${endpoints}</tbody></table>
  ${
    markets.length === 0
      ? ''
      : `<h2>بازارها <span class="en">Markets</span></h2>
  <table><thead><tr><th>بازار <div class="en">Market</div></th><th>وضعیت <div class="en">State</div></th><th>بازگشایی بعدی <div class="en">Next opening</div></th></tr></thead><tbody>${markets.map((market) => marketRow(market, time)).join('')}</tbody></table>`
  }
  <h2>تاریخچه نرخ‌ها <span class="en">History (candles)</span></h2>
  <table><thead><tr><th>وضعیت <div class="en">State</div></th><th>نگهداری <div class="en">Kept</div></th><th>آخرین کندل نوشته‌شده <div class="en">Last candle written</div></th><th>عمر <div class="en">Age</div></th><th>ثبت در این گره <div class="en">Recorded here</div></th><th>در انتظار نوشتن <div class="en">Waiting to be written</div></th></tr></thead><tbody>${historyRow(status.history, time, now)}</tbody></table>
  <h2>جریان زنده <span class="en">Push stream</span></h2>
  <table><thead><tr><th>وضعیت <div class="en">State</div></th><th>جریان‌های باز در این گره <div class="en">Open on this node</div></th></tr></thead><tbody>${streamRow(status.stream)}</tbody></table>
  <h2>منابع داده زنده <span class="en">Live-data sources</span></h2>
  <table><thead><tr><th>منبع <div class="en">Source</div></th><th>وضعیت <div class="en">State</div></th><th>آخرین به‌روزرسانی <div class="en">Last update</div></th><th>عمر داده <div class="en">Age</div></th><th>اقلام <div class="en">Items</div></th><th>خطا <div class="en">Error</div></th><th>۶ ساعت گذشته <div class="en">Last 6 hours</div></th></tr></thead><tbody>${sources}</tbody></table>
  <h2>گره‌ها <span class="en">Nodes</span></h2>
  <table><thead><tr><th>شناسه <div class="en">Id</div></th><th>نقش <div class="en">Role</div></th><th>دریافت داده <div class="en">Ingest</div></th><th>نسخه <div class="en">Version</div></th><th>آخرین پیام <div class="en">Last seen</div></th></tr></thead><tbody>${nodes}</tbody></table>
  <p class="meta">این صفحه هر ${persianDigits(REFRESH_SECONDS)} ثانیه به‌روز می‌شود. <span class="en">This page refreshes every ${REFRESH_SECONDS} seconds.</span></p>
</main>
</body>
</html>`;
}

/** The page's style sheet, served as its own file (the pages' policy allows no inline style). */
export const STATUS_STYLE = `body { font-family: Vazirmatn, Tahoma, "Segoe UI", sans-serif; margin: 0; background: #f6f7f9; color: #1d232b; }
main { max-width: 960px; margin: 0 auto; padding: 24px 16px 48px; }
h1 { font-size: 1.4rem; margin: 0 0 4px; }
.en { color: #5b6573; font-size: .85em; direction: ltr; text-align: inherit; }
.banner { border-radius: 10px; padding: 16px 20px; margin: 16px 0 24px; color: #fff; }
.banner.active { background: #1f8f4e; } .banner.degraded { background: #c77700; } .banner.down { background: #b3261e; }
.banner strong { font-size: 1.2rem; display: block; }
table { width: 100%; border-collapse: collapse; background: #fff; border-radius: 10px; overflow: hidden; margin-bottom: 24px; }
th, td { padding: 10px 12px; border-bottom: 1px solid #e6e8eb; text-align: start; vertical-align: top; }
th { background: #eef0f3; font-weight: 600; }
.badge { display: inline-block; padding: 2px 10px; border-radius: 999px; font-size: .85em; white-space: nowrap; }
.badge.active { background: #dff3e6; color: #14683a; } .badge.degraded { background: #fdeccc; color: #8a5300; } .badge.down { background: #fadcd9; color: #8c1d18; }
.meta { color: #5b6573; font-size: .9em; }
code { font-size: .9em; overflow-wrap: anywhere; }
.spark { color: #2d6cdf; display: block; max-width: 100%; }
.date { white-space: nowrap; }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: 4px 12px; }
dl.meta dd { margin: 0; }
/* Narrow screens: each row becomes a card of label/value lines, so nothing scrolls sideways. */
@media (max-width: 640px) {
  main { padding: 16px 10px 32px; }
  table, tbody, tr, td { display: block; width: auto; }
  thead { display: none; }
  tr { border-bottom: 2px solid #e6e8eb; padding: 6px 0; }
  td { border: 0; padding: 4px 12px; }
  td::before { content: attr(data-label); display: block; font-size: .75em; color: #5b6573; }
  dl.meta { grid-template-columns: 1fr; }
}
`;

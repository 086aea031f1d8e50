import { formatAge, type ZoneTime } from '../domain/time.js';
import type { ServiceStatus } from '../render/status.js';
import type { SourceState } from '../sources/monitor.js';
import { jalaliDateTime, persianAge, persianDigits } from './persian.js';
import { publicReasons } from './public-reasons.js';

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
  status: 'وضعیت سرویس',
  usage: 'گزارش مصرف',
  webservice: 'وب‌سرویس قدیمی',
};

/** A source's `error` for the public: fixed reasons in Persian and English, never the raw message (that stays in the logs). */
function sourceError(error: string | null): string {
  const reasons = publicReasons(error);
  if (reasons.length === 0) return '—';
  return `${escape(reasons.map((r) => r.fa).join('؛ '))}<div class="en">${escape(reasons.map((r) => r.en).join('; '))}</div>`;
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
    `<title>${total} مقدار در ۶ ساعت گذشته · ${total} values served in the last 6 hours (per 10 minutes)</title>` +
    `<polyline points="${points}" fill="none" stroke="currentColor" stroke-width="1.5" stroke-linejoin="round"/></svg>`
  );
}

/** The public status page: the same facts as /v1/status, for people, in Persian and English. */
export function renderStatusPage(
  status: ServiceStatus,
  time: ZoneTime,
  now: number,
  activity: (source: string) => number[] | null = () => null,
  openStreams: number | null = null,
): string {
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
        `<tr><td data-label="شناسه · Id" dir="ltr"><code>${escape(n.id)}</code></td><td data-label="نقش · Role" dir="ltr">${escape(n.role)}</td><td data-label="دریافت داده · Ingest">${n.leader ? 'رهبر <span class="en">leader</span>' : '—'}</td>` +
        `<td data-label="نسخه · Version" dir="ltr">${n.version === null ? '—' : n.version}</td><td data-label="آخرین پیام · Last seen">${moment(n.last_seen, time)}</td></tr>`,
    )
    .join('');
  const sources = status.sources
    .map(
      (s) =>
        `<tr><td data-label="منبع · Source" dir="ltr">${escape(s.name)}</td><td data-label="وضعیت · State">${badge(s.state)}</td><td data-label="آخرین به‌روزرسانی · Last update">${moment(s.last_update, time)}</td>` +
        `<td data-label="عمر داده · Age">${age(s.age_seconds)}</td><td data-label="خطا · Error">${sourceError(s.error)}</td>` +
        `<td data-label="۶ ساعت گذشته · Last 6 hours" dir="ltr">${chart(activity(s.name))}</td></tr>`,
    )
    .join('');
  return `<!doctype html>
<html lang="fa" dir="rtl">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="refresh" content="${REFRESH_SECONDS}">
<title>وضعیت سرویس نرخ · Nerkh status</title>
<style>
  body { font-family: Vazirmatn, Tahoma, "Segoe UI", sans-serif; margin: 0; background: #f6f7f9; color: #1d232b; }
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
</style>
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
  ${openStreams === null ? '' : `<p class="meta">جریان‌های باز: ${persianDigits(openStreams)} <span class="en">Open streams: ${openStreams}</span></p>`}
  ${redis}
  <h2>سرویس‌ها <span class="en">Endpoints</span></h2>
  <table><thead><tr><th>سرویس <div class="en">Service</div></th><th>مسیر <div class="en">Path</div></th><th>وضعیت <div class="en">State</div></th></tr></thead><tbody>${endpoints}</tbody></table>
  <h2>منابع داده زنده <span class="en">Live-data sources</span></h2>
  <table><thead><tr><th>منبع <div class="en">Source</div></th><th>وضعیت <div class="en">State</div></th><th>آخرین به‌روزرسانی <div class="en">Last update</div></th><th>عمر داده <div class="en">Age</div></th><th>خطا <div class="en">Error</div></th><th>۶ ساعت گذشته <div class="en">Last 6 hours</div></th></tr></thead><tbody>${sources}</tbody></table>
  <h2>گره‌ها <span class="en">Nodes</span></h2>
  <table><thead><tr><th>شناسه <div class="en">Id</div></th><th>نقش <div class="en">Role</div></th><th>دریافت داده <div class="en">Ingest</div></th><th>نسخه <div class="en">Version</div></th><th>آخرین پیام <div class="en">Last seen</div></th></tr></thead><tbody>${nodes}</tbody></table>
  <p class="meta">این صفحه هر ${persianDigits(REFRESH_SECONDS)} ثانیه به‌روز می‌شود. <span class="en">This page refreshes every ${REFRESH_SECONDS} seconds.</span></p>
</main>
</body>
</html>`;
}

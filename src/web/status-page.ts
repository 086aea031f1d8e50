import { formatAge, type ZoneTime } from '../domain/time.js';
import type { ServiceStatus } from '../render/status.js';
import type { SourceState } from '../sources/monitor.js';

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

const PERSIAN_NUMBER = new Intl.NumberFormat('fa-IR', { useGrouping: false });
const fa = (digits: string) => PERSIAN_NUMBER.format(Number(digits));

/** Persian for the reasons the source monitor gives; a reason not listed here is shown in English only. */
const REASONS_FA: [RegExp, (m: RegExpExecArray) => string][] = [
  [/^no usable values \(items is empty\)$/, () => 'بدون مقدار قابل استفاده (فهرست اقلام خالی است)'],
  [/^no usable values \((\d+) dropped\)$/, (m) => `بدون مقدار قابل استفاده (${fa(m[1]!)} مقدار نامعتبر کنار گذاشته شد)`],
  [/^no usable values \((\d+) out of range\)$/, (m) => `بدون مقدار قابل استفاده (${fa(m[1]!)} مقدار خارج از محدوده مجاز)`],
  [/^(\d+) values? dropped$/, (m) => `${fa(m[1]!)} مقدار نامعتبر کنار گذاشته شد`],
  [/^(\d+) values? out of range$/, (m) => `${fa(m[1]!)} مقدار خارج از محدوده مجاز`],
  [/^(\d+) values? rejected as outliers?$/, (m) => `${fa(m[1]!)} مقدار ناهمخوان با منابع دیگر کنار گذاشته شد`],
  [/^(\d+) jumps? held for confirmation$/, (m) => `${fa(m[1]!)} جهش قیمت در انتظار تأیید`],
  [/^data older than (\d+) s$/, (m) => `داده قدیمی‌تر از ${fa(m[1]!)} ثانیه`],
  [/^file not found$/, () => 'فایل پیدا نشد'],
  [/^request timed out$/, () => 'مهلت درخواست تمام شد'],
];

/** A source's `error` for people: each known part in Persian, then the English as given. */
function sourceError(error: string | null): string {
  if (!error) return '—';
  const persian = error
    .split('; ')
    .map((part) => {
      for (const [pattern, say] of REASONS_FA) {
        const match = pattern.exec(part);
        if (match) return say(match);
      }
      return null;
    })
    .filter((part): part is string => part !== null);
  const english = `<div class="en">${escape(error)}</div>`;
  return persian.length > 0 ? `${escape(persian.join('؛ '))}${english}` : english;
}

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function badge(state: SourceState): string {
  return `<span class="badge ${state}">${STATE_TEXT[state].fa} · ${STATE_TEXT[state].en}</span>`;
}

/** The public status page: the same facts as /v1/status, for people, in Persian and English. */
export function renderStatusPage(status: ServiceStatus, time: ZoneTime, now: number): string {
  const at = (ms: number | null) => (ms === null ? '—' : escape(time.format(ms)));
  const banner = BANNER[status.service.state];
  const endpoints = status.endpoints
    .map((e) => `<tr><td>${escape(ENDPOINT_TITLES[e.name] ?? e.name)}<div class="en">${escape(e.name)}</div></td><td dir="ltr"><code>${escape(e.path)}</code></td><td>${badge(e.state)}</td></tr>`)
    .join('');
  const store = status.store.reachable
    ? ''
    : `<p class="meta">${badge('down')} پایگاه داده در دسترس نیست؛ نرخ‌ها از حافظه ارائه می‌شوند و آمار مصرف نگه داشته می‌شود. <span class="en">The account store is unreachable since ${at(status.store.since)}; rates are served from memory and usage is buffered.</span></p>`;
  const sources = status.sources
    .map(
      (s) =>
        `<tr><td dir="ltr">${escape(s.name)}</td><td>${badge(s.state)}</td><td dir="ltr">${at(s.last_update)}</td>` +
        `<td dir="ltr">${s.age_seconds === null ? 'never' : escape(formatAge(s.age_seconds))}</td><td>${sourceError(s.error)}</td></tr>`,
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
  code { font-size: .9em; }
</style>
</head>
<body>
<main>
  <h1>وضعیت سرویس نرخ</h1>
  <div class="en">Nerkh service status</div>
  <div class="banner ${status.service.state}" role="status">
    <strong>${banner.fa}</strong>
    <span dir="ltr">${banner.en} — ${escape(status.service.message)}</span>
  </div>
  <p class="meta">آخرین بررسی (last check): <span dir="ltr">${at(status.last_check)}</span> ·
     آخرین به‌روزرسانی (last update): <span dir="ltr">${at(status.last_update)}</span> ·
     تولید صفحه (generated): <span dir="ltr">${escape(time.format(now))}</span></p>
  ${store}
  <h2>سرویس‌ها <span class="en">Endpoints</span></h2>
  <table><thead><tr><th>سرویس <div class="en">Service</div></th><th>مسیر <div class="en">Path</div></th><th>وضعیت <div class="en">State</div></th></tr></thead><tbody>${endpoints}</tbody></table>
  <h2>منابع داده زنده <span class="en">Live-data sources</span></h2>
  <table><thead><tr><th>منبع <div class="en">Source</div></th><th>وضعیت <div class="en">State</div></th><th>آخرین به‌روزرسانی <div class="en">Last update</div></th><th>عمر داده <div class="en">Age</div></th><th>خطا <div class="en">Error</div></th></tr></thead><tbody>${sources}</tbody></table>
  <p class="meta">این صفحه هر ${REFRESH_SECONDS} ثانیه به‌روز می‌شود. <span class="en">This page refreshes every ${REFRESH_SECONDS} seconds.</span></p>
</main>
</body>
</html>`;
}

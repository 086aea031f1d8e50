import type { DropCount, DropReason } from '../sources/drops.js';
import type { FormatName } from '../sources/formats/spec.js';
import { persianDigits } from './persian.js';

/** A reason a source is unwell, as the public may see it. */
export interface PublicReason {
  fa: string;
  en: string;
}

type Rule = [RegExp, (m: RegExpExecArray) => PublicReason];

/**
 * The fixed set of reasons the public pages show. A source's own message (a
 * parser's complaint, an upstream status line) stays in the logs and in the
 * keyed /v1/status: the public sees only which kind of failure it is.
 */
const UNREACHABLE: PublicReason = { fa: 'منبع در دسترس نیست', en: 'source unreachable' };
const TIMED_OUT: PublicReason = { fa: 'مهلت درخواست تمام شد', en: 'request timed out' };
const FUTURE: PublicReason = { fa: 'زمان سند در آینده است', en: 'document dated in the future' };

/** ", 2 stamped ahead of the clock", in both languages, when some dropped values were. */
const ahead = (count: string | undefined) => (count === undefined ? { fa: '', en: '' } : { fa: `، ${persianDigits(count)} مورد با زمان آینده`, en: `, ${count} stamped ahead of the clock` });

const RULES: Rule[] = [
  [/^no usable values \(items is empty\)$/, () => ({ fa: 'بدون مقدار قابل استفاده (فهرست اقلام خالی است)', en: 'no usable values (items is empty)' })],
  [
    /^no usable values \((\d+) dropped(?:, (\d+) of them stamped ahead of the clock)?\)$/,
    (m) => ({ fa: `بدون مقدار قابل استفاده (${persianDigits(m[1]!)} مقدار نامعتبر کنار گذاشته شد${ahead(m[2]).fa})`, en: `no usable values (${m[1]} dropped${ahead(m[2]).en})` }),
  ],
  [/^no usable values \((\d+) out of range\)$/, (m) => ({ fa: `بدون مقدار قابل استفاده (${persianDigits(m[1]!)} مقدار خارج از محدوده مجاز)`, en: `no usable values (${m[1]} out of range)` })],
  [
    /^(\d+) values? dropped(?: \((\d+) stamped ahead of the clock\))?$/,
    (m) => ({ fa: `${persianDigits(m[1]!)} مقدار نامعتبر کنار گذاشته شد${ahead(m[2]).fa}`, en: `${m[1]} ${m[1] === '1' ? 'value' : 'values'} dropped${ahead(m[2]).en}` }),
  ],
  [/^(\d+) values? out of range$/, (m) => ({ fa: `${persianDigits(m[1]!)} مقدار خارج از محدوده مجاز`, en: `${m[1]} ${m[1] === '1' ? 'value' : 'values'} out of range` })],
  [/^(\d+) values? rejected as outliers?$/, (m) => ({ fa: `${persianDigits(m[1]!)} مقدار ناهمخوان با منابع دیگر کنار گذاشته شد`, en: `${m[1]} ${m[1] === '1' ? 'value' : 'values'} rejected as ${m[1] === '1' ? 'outlier' : 'outliers'}` })],
  [/^(\d+) jumps? held for confirmation$/, (m) => ({ fa: `${persianDigits(m[1]!)} جهش قیمت در انتظار تأیید`, en: `${m[1]} ${m[1] === '1' ? 'jump' : 'jumps'} held for confirmation` })],
  [/^data older than (\d+) s$/, (m) => ({ fa: `داده قدیمی‌تر از ${persianDigits(m[1]!)} ثانیه`, en: `data older than ${m[1]} s` })],
  [/^file not found$/, () => ({ fa: 'فایل پیدا نشد', en: 'file not found' })],
  [/^(request timed out|connection timed out)\b/, () => TIMED_OUT],
  [/^response larger than \S+ \S+ \(max_bytes\)$/, () => ({ fa: 'پاسخ منبع بیش از حد بزرگ است', en: 'response too large' })],
  [/^file larger than \S+ \S+ \(max_bytes\)$/, () => ({ fa: 'فایل منبع بیش از حد بزرگ است', en: 'file too large' })],
  [/^updated_at is .+ ahead of the clock/, () => FUTURE],
  [/^(redirect refused: )?(plain http:\/\/|only https:\/\/)/, () => ({ fa: 'نشانی ناامن پذیرفته نشد', en: 'insecure address refused' })],
  [/^redirect refused \(HTTP \d+,/, () => ({ fa: 'منبع به نشانی دیگری هدایت کرد و پذیرفته نشد', en: 'redirect refused' })],
  [/^(too many redirects|HTTP \d+ (without a|to an invalid) Location)/, () => ({ fa: 'هدایت نادرست یا پی‌درپی منبع', en: 'bad redirect' })],
  // The status code alone (never the upstream's status line): the source was reached and said no.
  [/^HTTP ([1-5]\d\d)$/, (m) => ({ fa: `منبع با خطای HTTP ${persianDigits(m[1]!)} پاسخ داد`, en: `source answered HTTP ${m[1]}` })],
  [/^(file not readable|path is a directory|host unreachable|network unreachable|network down|request failed\b)/, () => UNREACHABLE],
  [/^connection refused$/, () => ({ fa: 'منبع اتصال را نپذیرفت', en: 'connection refused' })],
  [/^connection (reset|closed) by the server$/, () => ({ fa: 'منبع اتصال را قطع کرد', en: 'connection closed by the source' })],
  [/^DNS lookup failed\b/, () => ({ fa: 'نام میزبان منبع پیدا نشد', en: 'DNS lookup failed' })],
  [/^TLS\b/, () => ({ fa: 'خطا در اتصال امن (TLS) به منبع', en: 'TLS error' })],
  [/^not a regular file\b/, () => ({ fa: 'مسیر منبع یک فایل عادی نیست', en: 'not a regular file' })],
  [/^file read (timed out|stuck)\b/, () => ({ fa: 'مهلت خواندن فایل تمام شد', en: 'file read timed out' })],
  [/^parse took longer than\b/, () => ({ fa: 'مهلت پردازش سند تمام شد', en: 'document took too long to parse' })],
  [/^parse needed more than\b/, () => ({ fa: 'پردازش سند حافظهٔ بیش از حد می‌خواست', en: 'document needed too much memory to parse' })],
  [/^(parse thread failed|no parse thread started)\b/, () => ({ fa: 'خطای داخلی در پردازش سند', en: 'internal error parsing the document' })],
];

const INVALID_DOCUMENT: PublicReason = { fa: 'سند نامعتبر', en: 'invalid document' };

/** Each "; "-separated part of a source's error, mapped to a public reason (anything unknown: invalid document). */
export function publicReasons(error: string | null): PublicReason[] {
  if (!error) return [];
  const reasons = error.split('; ').map((part) => {
    for (const [pattern, say] of RULES) {
      const match = pattern.exec(part);
      if (match) return say(match);
    }
    return INVALID_DOCUMENT;
  });
  return reasons.filter((reason, i) => reasons.findIndex((r) => r.en === reason.en) === i);
}

/** Why items were dropped, as the public may see it: the kind of problem, never the document's text nor its keys. */
const DROP_REASONS: Record<DropReason, PublicReason> = {
  no_match: { fa: 'مسیر به مقداری نرسید', en: 'path matched nothing' },
  several_matches: { fa: 'مسیر به بیش از یک مقدار رسید', en: 'path matched several values' },
  not_a_number: { fa: 'مقدار عدد نیست', en: 'not a number' },
  bad_grouping: { fa: 'جداکننده هزارگان نادرست', en: 'bad digit grouping' },
  mixed_digits: { fa: 'ارقام از چند نظام', en: 'mixed digit systems' },
  not_positive: { fa: 'مقدار صفر یا منفی', en: 'zero or negative' },
  bad_time: { fa: 'زمان نامعتبر', en: 'bad time' },
  ahead: { fa: 'زمان در آینده', en: 'stamped ahead of the clock' },
  no_currency: { fa: 'ارز در سند نیست', en: 'currency not in the document' },
  bad_row: { fa: 'سطر نادرست', en: 'malformed row' },
};

const FORMAT_TEXT: Record<FormatName, PublicReason> = {
  nerkh: { fa: 'قالب نرخ', en: 'nerkh format' },
  mapping: { fa: 'نگاشت JSON', en: 'JSON mapping' },
  ecb: { fa: 'نرخ‌های بانک مرکزی اروپا', en: 'ECB reference rates' },
  csv: { fa: 'CSV', en: 'CSV' },
};

/**
 * A source's items for the public: its format, how many items it mapped and
 * how many it dropped, each reason a fixed phrase with its count
 * ("12 mapped, 2 dropped: not a number 1, path matched nothing 1").
 */
export function publicItems(format: FormatName, mapped: number, drops: readonly DropCount[]): PublicReason {
  const dropped = drops.reduce((sum, drop) => sum + drop.count, 0);
  const faDrops = drops.map((drop) => `${DROP_REASONS[drop.reason].fa} ${persianDigits(drop.count)}`).join('، ');
  const enDrops = drops.map((drop) => `${DROP_REASONS[drop.reason].en} ${drop.count}`).join(', ');
  return {
    fa: `${FORMAT_TEXT[format].fa}: ${persianDigits(mapped)} مقدار خوانده شد${dropped > 0 ? `، ${persianDigits(dropped)} کنار گذاشته شد (${faDrops})` : ''}`,
    en: `${FORMAT_TEXT[format].en}: ${mapped} mapped${dropped > 0 ? `, ${dropped} dropped (${enDrops})` : ''}`,
  };
}

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
const RULES: Rule[] = [
  [/^no usable values \(items is empty\)$/, () => ({ fa: 'بدون مقدار قابل استفاده (فهرست اقلام خالی است)', en: 'no usable values (items is empty)' })],
  [/^no usable values \((\d+) dropped\)$/, (m) => ({ fa: `بدون مقدار قابل استفاده (${persianDigits(m[1]!)} مقدار نامعتبر کنار گذاشته شد)`, en: `no usable values (${m[1]} dropped)` })],
  [/^no usable values \((\d+) out of range\)$/, (m) => ({ fa: `بدون مقدار قابل استفاده (${persianDigits(m[1]!)} مقدار خارج از محدوده مجاز)`, en: `no usable values (${m[1]} out of range)` })],
  [/^(\d+) values? dropped$/, (m) => ({ fa: `${persianDigits(m[1]!)} مقدار نامعتبر کنار گذاشته شد`, en: `${m[1]} ${m[1] === '1' ? 'value' : 'values'} dropped` })],
  [/^(\d+) values? out of range$/, (m) => ({ fa: `${persianDigits(m[1]!)} مقدار خارج از محدوده مجاز`, en: `${m[1]} ${m[1] === '1' ? 'value' : 'values'} out of range` })],
  [/^(\d+) values? rejected as outliers?$/, (m) => ({ fa: `${persianDigits(m[1]!)} مقدار ناهمخوان با منابع دیگر کنار گذاشته شد`, en: `${m[1]} ${m[1] === '1' ? 'value' : 'values'} rejected as ${m[1] === '1' ? 'outlier' : 'outliers'}` })],
  [/^(\d+) jumps? held for confirmation$/, (m) => ({ fa: `${persianDigits(m[1]!)} جهش قیمت در انتظار تأیید`, en: `${m[1]} ${m[1] === '1' ? 'jump' : 'jumps'} held for confirmation` })],
  [/^data older than (\d+) s$/, (m) => ({ fa: `داده قدیمی‌تر از ${persianDigits(m[1]!)} ثانیه`, en: `data older than ${m[1]} s` })],
  [/^file not found$/, () => ({ fa: 'فایل پیدا نشد', en: 'file not found' })],
  [/^request timed out$/, () => ({ fa: 'مهلت درخواست تمام شد', en: 'request timed out' })],
  [/^(HTTP \d+|file not readable|path is a directory)$/, () => ({ fa: 'منبع در دسترس نیست', en: 'source unreachable' })],
  [/^response too large$/, () => ({ fa: 'پاسخ منبع بیش از حد بزرگ است', en: 'response too large' })],
  [/^updated_at is in the future$/, () => ({ fa: 'زمان سند در آینده است', en: 'document dated in the future' })],
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

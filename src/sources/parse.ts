import { isLosslessNumber, parse } from 'lossless-json';
import type { SourceValue } from '../domain/rate.js';
import { parseIsoDateTime } from '../domain/time.js';

/** What one successful read of a source yields. */
export interface SourceData {
  items: Map<string, SourceValue>;
  /** When the source as a whole was last updated (epoch ms): its age is measured from here. */
  dataTime: number;
  /** Items present but unusable: not a positive finite number, or with a bad timestamp. */
  dropped: number;
}

/**
 * How far ahead of our clock a timestamp may be. Beyond this it is a wrong clock or a typo,
 * and such a value would otherwise count as fresh forever and never fail over.
 */
export const MAX_CLOCK_SKEW_MS = 5 * 60_000;

/** A source document that cannot be used at all; its message is safe to show on the status page. */
export class SourceFormatError extends Error {}

/**
 * A well-formed document without a single usable value (`items` empty, or every
 * item dropped). It must not replace the source's last good data, nor leave
 * the source looking healthy while every value comes from elsewhere.
 */
export class NoUsableValuesError extends SourceFormatError {
  constructor(readonly dropped: number) {
    super(dropped > 0 ? `no usable values (${dropped} dropped)` : 'no usable values (items is empty)');
  }
}

/** An ISO 8601 timestamp with a zone (a naive local time is ambiguous), as epoch ms; null if invalid. */
export function parseTimestamp(text: unknown): number | null {
  return parseIsoDateTime(text, true)?.ms ?? null;
}

/**
 * Parse the source format of PRODUCT §5:
 * `{"updated_at": "<ISO>", "items": {"<source_key>": {"value": <number>, "updated_at": "<ISO>"} | <number>}}`.
 * Numbers are read losslessly so each value keeps the exact digits the source wrote.
 * A bare number takes the document's `updated_at`, else `fallbackTime` (the file's mtime).
 * Items that are not usable are dropped and counted; a document left with none is refused.
 */
export function parseSourceDocument(text: string, fallbackTime: number, now: number): SourceData {
  const latest = now + MAX_CLOCK_SKEW_MS;
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (error) {
    throw new SourceFormatError(`invalid JSON: ${(error as Error).message}`);
  }
  if (!isPlainObject(doc)) throw new SourceFormatError('document is not a JSON object');

  let documentTime: number | null = null;
  if (doc.updated_at !== undefined) {
    documentTime = parseTimestamp(doc.updated_at);
    if (documentTime === null) throw new SourceFormatError('updated_at is not an ISO 8601 timestamp with a zone');
    if (documentTime > latest) throw new SourceFormatError('updated_at is in the future');
  }
  if (!isPlainObject(doc.items)) throw new SourceFormatError('items is missing or not an object');

  const defaultTime = documentTime ?? fallbackTime;
  const items = new Map<string, SourceValue>();
  let dropped = 0;
  let newest = -Infinity;
  for (const [sourceKey, entry] of Object.entries(doc.items)) {
    const value = readItem(entry, defaultTime);
    if (!value || value.updatedAt > latest) {
      dropped++;
      continue;
    }
    items.set(sourceKey, value);
    if (value.updatedAt > newest) newest = value.updatedAt;
  }
  if (items.size === 0) throw new NoUsableValuesError(dropped);
  const dataTime = documentTime ?? newest;
  return { items, dataTime, dropped };
}

function readItem(entry: unknown, defaultTime: number): SourceValue | null {
  if (isLosslessNumber(entry)) return saneValue(entry.value, defaultTime);
  if (!isPlainObject(entry) || !isLosslessNumber(entry.value)) return null;
  let updatedAt = defaultTime;
  if (entry.updated_at !== undefined) {
    const parsed = parseTimestamp(entry.updated_at);
    if (parsed === null) return null;
    updatedAt = parsed;
  }
  return saneValue(entry.value.value, updatedAt);
}

/** Insane values (not finite, zero or negative) are dropped: no price is ever ≤ 0. */
function saneValue(raw: string, updatedAt: number): SourceValue | null {
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) return null;
  return { raw, value, updatedAt };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !isLosslessNumber(value);
}

import { none } from 'stream-chain/defs.js';
import { jsonParser, type Token } from 'stream-json/core/parser.js';
import type { SourceValue } from '../domain/rate.js';
import { parseIsoDateTime } from '../domain/time.js';
import type { DropReason } from './drops.js';
import { NO_TIME, OtherItems, settle, type PendingItem } from './settle.js';
import { SourceFormatError, type SourceData, type TimeRules } from './source-data.js';

// What every format's reader yields, defined beside the settling they share; named here too, where they were first.
export { DEFAULT_CLOCK_SKEW_MS, NoUsableValuesError, SourceFormatError, type SourceData, type TimeRules } from './source-data.js';

/** An ISO 8601 timestamp with a zone (a naive local time is ambiguous), as epoch ms; null if invalid. */
export function parseTimestamp(text: unknown): number | null {
  return parseIsoDateTime(text, true)?.ms ?? null;
}

/** Where the parser stands: before the document, in its top object, in `items`, in one object item, after the document. */
type Place = 'start' | 'document' | 'items' | 'item' | 'end';

const INVALID = Symbol('invalid');

/**
 * The source format (docs/configuration.md#sources), read as a stream:
 * `{"updated_at": "<ISO>", "items": {"<source_key>": {"value": <number>, "updated_at": "<ISO>"} | <number>}}`.
 *
 * Text is fed in chunks (`write`), tokenised by a streaming JSON parser, and
 * only the items are kept: the document is never turned into a tree, so a
 * large one costs little memory beyond its text. Numbers are kept as the
 * exact digits the source wrote. Keys may come in any order (`updated_at`
 * after `items` is fine), so times are settled in `finish`, against the
 * receive time. A repeated key takes its last value, as `JSON.parse` does.
 *
 * Given the keys it will be asked for (the catalogue's source keys), it keeps
 * only those: any other item is checked and counted just the same (so a
 * source's health reads as before) but not stored, so a document of a
 * million tiny items costs no more memory than one of the few hundred used.
 * Those keys are counted and the first few named (`unknownKeys`), so a
 * misspelt key is seen rather than silently skipped. (A repeated key among
 * those not kept counts once per occurrence.)
 */
export class SourceDocumentParser {
  /** Called with text, or with `none` at the end (the flush of stream-chain's protocol, which its typing leaves out). */
  private readonly tokenizer = jsonParser({ streamValues: false }) as (text: string | typeof none) => { values: Token[] } | typeof none;
  private at: Place = 'start';
  /** Depth inside a value being skipped (an unknown key's object or array); 0 when not skipping. */
  private skipping = 0;
  private key = '';
  private itemKey = '';
  private started = false;
  private documentTime: string | typeof INVALID | undefined;
  private items: Map<string, PendingItem> | typeof INVALID | undefined;
  private others = new OtherItems();
  /** The last item time read, and what it parsed to: items of one document mostly share one. */
  private lastTime: { text: string; ms: number | null } = { text: '', ms: null };
  /** The object item being read: its digits (null until a number is seen) and its own time. */
  private item: { raw: string | null; valueBad: boolean; time: string | typeof INVALID | undefined } | null = null;

  constructor(private readonly wanted: ReadonlySet<string> | null = null) {}

  write(text: string): void {
    if (!this.started) {
      this.started = true;
      // A byte-order mark is not JSON, but editors write one; the tokenizer would refuse it.
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    if (text.length > 0) this.consume(() => this.tokenizer(text));
  }

  /** The document's data once all of it was written, with every time settled against `rules`. */
  finish(rules: TimeRules): SourceData {
    this.consume(() => this.tokenizer(none));
    if (this.at !== 'end') throw new SourceFormatError('invalid JSON: the document ends early');
    let documentTime: number | null = null;
    if (this.documentTime !== undefined) {
      documentTime = this.documentTime === INVALID ? null : parseTimestamp(this.documentTime);
      if (documentTime === null) throw new SourceFormatError('updated_at is not an ISO 8601 timestamp with a zone');
    }
    if (this.items === undefined || this.items === INVALID) throw new SourceFormatError('items is missing or not an object');
    return settle(documentTime, this.items, this.others, rules);
  }

  private consume(step: () => { values: Token[] } | typeof none): void {
    let out;
    try {
      out = step();
    } catch (error) {
      throw new SourceFormatError(`invalid JSON: ${(error as Error).message}`);
    }
    if (out === none) return;
    for (const token of out.values) this.take(token);
  }

  private take(token: Token): void {
    if (this.skipping > 0) {
      if (token.name === 'startObject' || token.name === 'startArray') this.skipping++;
      else if (token.name === 'endObject' || token.name === 'endArray') this.skipping--;
      return;
    }
    switch (this.at) {
      case 'start':
        if (token.name !== 'startObject') throw new SourceFormatError('document is not a JSON object');
        this.at = 'document';
        return;
      case 'document':
        if (token.name === 'keyValue') this.key = token.value;
        else if (token.name === 'endObject') this.at = 'end';
        else this.documentValue(token);
        return;
      case 'items':
        if (token.name === 'keyValue') this.itemKey = token.value;
        else if (token.name === 'endObject') this.at = 'document';
        else this.itemValue(token);
        return;
      case 'item':
        if (token.name === 'keyValue') this.key = token.value;
        else if (token.name === 'endObject') this.endItem();
        else this.itemField(token);
        return;
      case 'end':
        // The tokenizer refuses anything after the document; nothing reaches here.
        return;
    }
  }

  private documentValue(token: Token): void {
    if (this.key === 'items' && token.name === 'startObject') {
      this.items = new Map();
      this.others = new OtherItems();
      this.at = 'items';
      return;
    }
    if (this.key === 'items') this.items = INVALID;
    else if (this.key === 'updated_at') this.documentTime = token.name === 'stringValue' ? token.value : INVALID;
    this.skip(token);
  }

  private itemValue(token: Token): void {
    if (token.name === 'numberValue') {
      this.keep(saneValue(token.value, NO_TIME));
    } else if (token.name === 'startObject') {
      this.item = { raw: null, valueBad: false, time: undefined };
      this.key = '';
      this.at = 'item';
    } else {
      this.keep('not_a_number');
      this.skip(token);
    }
  }

  private itemField(token: Token): void {
    const item = this.item!;
    if (this.key === 'value') {
      item.raw = token.name === 'numberValue' ? token.value : null;
      item.valueBad = token.name !== 'numberValue';
    } else if (this.key === 'updated_at') {
      item.time = token.name === 'stringValue' ? token.value : INVALID;
    }
    this.skip(token);
  }

  private endItem(): void {
    const { raw, valueBad, time } = this.item!;
    let value: PendingItem = 'not_a_number';
    if (raw !== null && !valueBad) {
      const updatedAt = time === undefined ? NO_TIME : time === INVALID ? null : this.timestamp(time);
      value = updatedAt === null ? 'bad_time' : saneValue(raw, updatedAt);
    }
    this.keep(value);
    this.item = null;
    this.key = '';
    this.at = 'items';
  }

  /** The item just read: stored when wanted, else only counted. */
  private keep(value: PendingItem): void {
    if (this.wanted === null || this.wanted.has(this.itemKey)) (this.items as Map<string, PendingItem>).set(this.itemKey, value);
    else this.others.add(this.itemKey, value);
  }

  private timestamp(text: string): number | null {
    if (text !== this.lastTime.text) this.lastTime = { text, ms: parseTimestamp(text) };
    return this.lastTime.ms;
  }

  /** Skip a value we do not read: a scalar is already consumed, an object or array is skipped to its end. */
  private skip(token: Token): void {
    if (token.name === 'startObject' || token.name === 'startArray') this.skipping = 1;
  }
}

/**
 * Parse a whole document held as text (see SourceDocumentParser). Items that
 * are not usable are dropped and counted; a document left with none is refused.
 */
export function parseSourceDocument(text: string, fallbackTime: number, now: number, skewMs?: number): SourceData {
  const parser = new SourceDocumentParser();
  parser.write(text);
  return parser.finish({ fallbackTime, now, skewMs });
}

/** Insane values (not finite, zero or negative) are dropped: no price is ever ≤ 0. */
function saneValue(raw: string, updatedAt: number): SourceValue | DropReason {
  const value = Number(raw);
  if (!Number.isFinite(value)) return 'not_a_number';
  if (value <= 0) return 'not_positive';
  return { raw, value, updatedAt };
}

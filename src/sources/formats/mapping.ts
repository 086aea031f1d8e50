import type { JSONPathQuery } from 'json-p3';
import { isLosslessNumber, parse as parseLossless } from 'lossless-json';
import { NO_TIME, OtherItems, settle, type PendingItem } from '../settle.js';
import { SourceFormatError, type SourceData, type TimeRules } from '../source-data.js';
import { WholeDocumentParser } from './document-parser.js';
import { readJsonNumber, readPriceText, scalePrice } from './price-text.js';
import type { MappingItem, MappingSpec } from './spec.js';
import { readTime } from './time-text.js';

type Location = readonly (string | number)[];
type Match = { ok: true; value: unknown; location: Location } | { ok: false; drop: 'no_match' | 'several_matches' };

/**
 * `format: "mapping"`: any JSON document, each configured source key read
 * from where its JSONPath (RFC 9535, json-p3) points. A value may be a JSON
 * number or a string as people write prices (see price-text.ts); a time
 * may be ISO 8601, unix seconds or milliseconds, or a Jalali date and time
 * in the configured zone (see time-text.ts). A path that matches nothing or
 * more than one value, and a value or time that does not read, drops that
 * item with its reason; it is never guessed at.
 *
 * The document is held whole (JSONPath needs the tree). Paths are evaluated
 * on `JSON.parse`'s tree, so filters compare numbers as JSON numbers; the
 * digits of a number matched are then read from a lossless parse of the
 * same text (made only when some path matched a number), so a value above
 * 2^53 or `71.250` keeps every digit as written.
 */
export class MappingParser extends WholeDocumentParser {

  constructor(private readonly spec: MappingSpec) {
    super();
  }

  finish(rules: TimeRules): SourceData {
    const text = this.wholeText();
    let tree: unknown;
    try {
      tree = JSON.parse(text);
    } catch (error) {
      throw invalidJson(error);
    }
    const exact = new ExactNumbers(text);
    const documentTime = this.spec.updatedAtPath === null ? null : this.documentTime(this.spec.updatedAtPath, tree);
    const pending = new Map<string, PendingItem>();
    for (const item of this.spec.items) pending.set(item.sourceKey, this.readItem(item, tree, exact));
    return settle(documentTime, pending, new OtherItems(), rules);
  }

  private readItem(item: MappingItem, tree: unknown, exact: ExactNumbers): PendingItem {
    const match = only(item.path, tree);
    if (!match.ok) return match.drop;
    const reading = typeof match.value === 'string' ? readPriceText(match.value) : typeof match.value === 'number' ? readJsonNumber(exact.at(match.location)) : { drop: 'not_a_number' as const };
    if ('drop' in reading) return reading.drop;
    const raw = scalePrice(reading.text, item.scale);
    const value = Number(raw);
    if (!Number.isFinite(value)) return 'not_a_number';
    let updatedAt = NO_TIME;
    if (item.timePath !== null) {
      const time = this.time(item.timePath, tree);
      if (time === null) return 'bad_time';
      updatedAt = time;
    }
    return { raw, value, updatedAt };
  }

  private time(path: JSONPathQuery, tree: unknown): number | null {
    const match = only(path, tree);
    return match.ok ? this.timeOf(match.value) : null;
  }

  /** The document's time: when configured, it must read, or the document is refused (as a bad `updated_at` is). */
  private documentTime(path: JSONPathQuery, tree: unknown): number {
    const match = only(path, tree);
    if (!match.ok) throw new SourceFormatError(`updated_at_path ${match.drop === 'no_match' ? 'matched nothing' : 'matched more than one value'}`);
    const time = this.timeOf(match.value);
    if (time === null) throw new SourceFormatError('updated_at_path does not point at a readable time');
    return time;
  }

  /** A time written as a string or as a number (unix seconds or milliseconds: never past 2^53, so a float holds it). */
  private timeOf(value: unknown): number | null {
    if (typeof value === 'number') return readTime(String(value), this.spec.zone);
    return typeof value === 'string' ? readTime(value, this.spec.zone) : null;
  }
}

/** The one value a path points at, or why there is none to use. */
function only(path: JSONPathQuery, tree: unknown): Match {
  let nodes;
  try {
    nodes = path.query(tree as Parameters<JSONPathQuery['query']>[0]).nodes;
  } catch (error) {
    // Only a document nested past the library's recursion limit gets here.
    throw new SourceFormatError(`JSONPath could not be evaluated: ${(error as Error).name}`);
  }
  if (nodes.length === 0) return { ok: false, drop: 'no_match' };
  if (nodes.length > 1) return { ok: false, drop: 'several_matches' };
  return { ok: true, value: nodes[0]!.value, location: nodes[0]!.location };
}

/** The exact text of the numbers of a document, parsed losslessly once, when first asked. */
class ExactNumbers {
  private tree: unknown = undefined;

  constructor(private readonly text: string) {}

  private parse(): unknown {
    try {
      // A repeated key takes its last value, as JSON.parse (which the paths were evaluated on) does.
      return parseLossless(this.text, null, { onDuplicateKey: ({ newValue }) => newValue });
    } catch (error) {
      // The lossless reader recurses: a document nested some ten thousand levels deep runs out of stack.
      if (error instanceof RangeError) throw new SourceFormatError('document nested too deeply');
      throw invalidJson(error);
    }
  }

  at(location: Location): string {
    this.tree ??= this.parse();
    let node = this.tree;
    for (const step of location) node = (node as Record<string | number, unknown>)[step];
    // Both parsers read the same text, so the node is a number there too.
    if (!isLosslessNumber(node)) throw new SourceFormatError('a number was read differently by the two JSON readers');
    return node.value;
  }
}

/** V8's message repeats a piece of the document; only the position is kept (the status page shows this). */
function invalidJson(error: unknown): SourceFormatError {
  const position = /position (\d+)/.exec((error as Error).message)?.[1];
  return new SourceFormatError(`invalid JSON${position === undefined ? '' : ` (at character ${position})`}`);
}

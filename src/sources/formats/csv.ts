import { CsvError, parse } from 'csv-parse/sync';
import { NO_TIME, OtherItems, settle, type PendingItem } from '../settle.js';
import { SourceFormatError, type SourceData, type TimeRules } from '../source-data.js';
import { WholeDocumentParser } from './document-parser.js';
import { readPriceText } from './price-text.js';
import type { CsvSpec } from './spec.js';
import { readTime } from './time-text.js';

/**
 * `format: "csv"`: one item a row, `source_key,value[,updated_at]`, read by
 * csv-parse (RFC 4180: a value with a comma in it is quoted,
 * `"1,125,050,000"`). Values are read as price strings (see price-text.ts),
 * times as in a mapping (see time-text.ts); a row without its own time takes
 * the file's modification time or the response's `Last-Modified`. Blank
 * lines and lines starting with `#` are skipped. The first line is a header,
 * and skipped, when its first field is no catalogue source key and its
 * second is no number (`source_key,value,updated_at`, `symbol,price`).
 * A repeated key takes its last row.
 */
export class CsvParser extends WholeDocumentParser {

  constructor(
    private readonly spec: CsvSpec,
    private readonly wanted: ReadonlySet<string> | null,
  ) {
    super();
  }

  finish(rules: TimeRules): SourceData {
    const pending = new Map<string, PendingItem>();
    const others = new OtherItems();
    let index = 0;
    // Each row is read as csv-parse yields it and none is kept, so a million rows cost no more than their text.
    this.eachRow(this.wholeText(), (fields) => {
      if (index++ === 0 && this.isHeader(fields)) return;
      const key = fields[0] ?? '';
      const item = this.readRow(fields);
      if (key === '') others.drops.add('bad_row');
      else if (this.wanted === null || this.wanted.has(key)) pending.set(key, item);
      else others.add(key, item);
    });
    return settle(null, pending, others, rules);
  }

  private eachRow(text: string, take: (fields: string[]) => void): void {
    try {
      // A row taken here returns nothing, so csv-parse collects none of them.
      parse(text, { bom: true, trim: true, skip_empty_lines: true, comment: '#', comment_no_infix: true, relax_column_count: true, on_record: (fields: string[]) => void take(fields) });
    } catch (error) {
      // csv-parse's message may quote the document; its code and line are enough to find the fault.
      if (error instanceof CsvError) throw new SourceFormatError(`invalid CSV (${error.code}${typeof error.lines === 'number' ? `, line ${error.lines}` : ''})`);
      throw error;
    }
  }

  private isHeader(fields: string[]): boolean {
    const [key, value] = fields;
    return !(this.wanted?.has(key ?? '') ?? false) && (value === undefined || 'drop' in readPriceText(value));
  }

  private readRow(fields: string[]): PendingItem {
    if (fields.length < 2 || fields.length > 3) return 'bad_row';
    const reading = readPriceText(fields[1]!);
    if ('drop' in reading) return reading.drop;
    const value = Number(reading.text);
    if (!Number.isFinite(value)) return 'not_a_number';
    let updatedAt = NO_TIME;
    if (fields[2] !== undefined && fields[2] !== '') {
      const time = readTime(fields[2], this.spec.zone);
      if (time === null) return 'bad_time';
      updatedAt = time;
    }
    return { raw: reading.text, value, updatedAt };
  }
}

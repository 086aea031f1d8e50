import { SourceFormatError, type SourceData, type TimeRules } from '../source-data.js';

/**
 * What every format's reader is to the parse threads (parse-worker.ts): text
 * fed in slices, then the data once the last slice is in. It runs in a
 * thread, never on the event loop, so it need not pause however long it
 * takes; the thread's deadline and heap bound it.
 */
export interface DocumentParser {
  write(text: string): void;
  finish(rules: TimeRules): SourceData;
}

/**
 * A reader of a document read whole: the formats that need all of it before
 * they can read any (a JSON tree for JSONPath, an XML tree, CSV rows) collect
 * its slices here and read `wholeText()` once finishing. Its size is already
 * bounded by `max_bytes` on the way in.
 */
export abstract class WholeDocumentParser implements DocumentParser {
  private readonly parts: string[] = [];
  private started = false;

  write(text: string): void {
    if (!this.started && text.length > 0) {
      this.started = true;
      // A byte-order mark is no part of the document, though editors write one.
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    if (text.length > 0) this.parts.push(text);
  }

  abstract finish(rules: TimeRules): SourceData;

  /** The document, once: the slices are let go. */
  protected wholeText(): string {
    const whole = this.parts.join('');
    this.parts.length = 0;
    if (whole.trim().length === 0) throw new SourceFormatError('the document is empty');
    return whole;
  }
}

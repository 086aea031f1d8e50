import type { MessagePort } from 'node:worker_threads';
import type { DropCount } from './drops.js';
import { createDocumentParser } from './formats/index.js';
import { compilePortable, type PortableFormat } from './formats/portable.js';
import type { FormatName } from './formats/spec.js';
import { NoUsableValuesError, SourceFormatError, type SourceData, type TimeRules } from './source-data.js';

/** One document to parse, as the event loop hands it over: its bytes (moved, not copied) and how to read them. */
export interface ParseJob {
  bytes: Uint8Array;
  format: PortableFormat;
  /** The only item keys kept (the catalogue's source keys); null: every item. */
  wanted: ReadonlySet<string> | null;
  rules: TimeRules;
  /** Told when a thread takes the job: its deadline counts from then, not from a thread's start. */
  started: MessagePort;
}

/** Why a document was refused, as it crosses back (an Error's class does not survive the crossing). */
export interface ParseRefusal {
  message: string;
  /** Set when the document was well formed but had no usable value: what was dropped. */
  noUsable: { dropped: number; ahead: number; reasons: readonly DropCount[] } | null;
}

/** The values (plain data: every number as the digits the source wrote), or why there are none. */
export type ParseOutcome = { data: SourceData } | { refused: ParseRefusal };

/** Bytes are decoded and handed to a parser in slices of this many (the nerkh tokenizer makes its tokens per slice). */
const SLICE_BYTES = 64 * 1024;

const LANGUAGE: Record<FormatName, string> = { nerkh: 'JSON', mapping: 'JSON', ecb: 'XML', csv: 'CSV' };

/**
 * Runs in a parse thread (parse-threads.ts): decodes the document, reads it
 * in its format, evaluates its paths and settles its times. Whatever the
 * parser throws is a refusal of the document with the parser's reason, never
 * taken for a failure of the network or of the thread.
 */
export default function parseDocument(job: ParseJob): ParseOutcome {
  job.started.postMessage(null);
  job.started.close();
  try {
    const parser = createDocumentParser(compilePortable(job.format), job.wanted);
    // Decoded slice by slice: the nerkh reader never needs the whole text at once.
    const decoder = new TextDecoder('utf-8');
    for (let at = 0; at < job.bytes.length; at += SLICE_BYTES) parser.write(decoder.decode(job.bytes.subarray(at, at + SLICE_BYTES), { stream: true }));
    parser.write(decoder.decode());
    return { data: parser.finish(job.rules) };
  } catch (error) {
    return { refused: refusalOf(error, LANGUAGE[job.format.fields.format ?? 'nerkh']) };
  }
}

function refusalOf(error: unknown, language: string): ParseRefusal {
  if (error instanceof NoUsableValuesError) return { message: error.message, noUsable: { dropped: error.dropped, ahead: error.ahead, reasons: error.reasons } };
  if (error instanceof SourceFormatError) return { message: error.message, noUsable: null };
  // A parser that recurses (an XML or JSON tree some ten thousand levels deep) runs out of stack.
  if (error instanceof RangeError && /call stack/i.test(error.message)) return { message: `invalid ${language}: nested too deeply`, noUsable: null };
  return { message: `invalid ${language}: ${parserReason(error)}`, noUsable: null };
}

/**
 * The parser's own words, up to any colon: what follows one often quotes the
 * document (a tag, a line of it), and the public status page shows no text
 * of a document.
 */
function parserReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const reason = message.split(/[:\n]/, 1)[0]!.trim().slice(0, 120);
  return reason === '' ? 'the parser refused it' : reason;
}

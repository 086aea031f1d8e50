import { setImmediate as nextTurn } from 'node:timers/promises';
import { createDocumentParser, type FormatSpec } from './formats/index.js';
import { SourceFormatError, type SourceData, type TimeRules } from './source-data.js';

export { DEFAULT_MAX_BYTES } from './defaults.js';

/** Text is handed to the parser in slices of at most this many characters. */
const SLICE_CHARS = 64 * 1024;
/** Parsing gives the event loop a turn whenever it has held it this long. */
const TURN_MS = 8;

/** A document past `max_bytes`: refused whole, however it was sent or compressed. */
export class DocumentTooLargeError extends SourceFormatError {
  constructor(
    readonly maxBytes: number,
    what: 'response' | 'file',
  ) {
    super(`${what} larger than ${formatBytes(maxBytes)} (max_bytes)`);
  }
}

/**
 * Read a source document from its bytes as they arrive: decoded as UTF-8,
 * counted, and parsed as it goes, so neither the body nor a tree of it is
 * ever held whole. Past `maxBytes` decoded bytes it throws at once (the
 * caller's stream is then cancelled, so the sender is cut off there too).
 * The parse yields to the event loop every few milliseconds, so a large
 * document never stalls requests being served meanwhile. `rules` is asked
 * for the times once the last byte is in (the receive time). The document is
 * read in the source's `format` (default nerkh); with `wanted`, only those
 * items are kept (see createDocumentParser).
 */
export async function readDocument(chunks: AsyncIterable<Uint8Array>, limits: { maxBytes: number; wanted?: ReadonlySet<string> | null; format?: FormatSpec }, what: 'response' | 'file', rules: () => TimeRules): Promise<SourceData> {
  const { maxBytes } = limits;
  const decoder = new TextDecoder('utf-8');
  const parser = createDocumentParser(limits.format, limits.wanted ?? null);
  let bytes = 0;
  let since = performance.now();
  for await (const chunk of chunks) {
    bytes += chunk.byteLength;
    if (bytes > maxBytes) throw new DocumentTooLargeError(maxBytes, what);
    const text = decoder.decode(chunk, { stream: true });
    for (let at = 0; at < text.length; at += SLICE_CHARS) {
      parser.write(text.length <= SLICE_CHARS ? text : text.slice(at, at + SLICE_CHARS));
      if (performance.now() - since >= TURN_MS) {
        await nextTurn();
        since = performance.now();
      }
    }
  }
  parser.write(decoder.decode());
  const steps = parser.finishing(rules());
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    if (performance.now() - since >= TURN_MS) {
      await nextTurn();
      since = performance.now();
    }
  }
}

/** 16777216 → "16 MiB"; 1500 → "1500 bytes". */
function formatBytes(bytes: number): string {
  for (const [unit, size] of [
    ['GiB', 2 ** 30],
    ['MiB', 2 ** 20],
    ['KiB', 2 ** 10],
  ] as const) {
    if (bytes >= size && bytes % (size / 4) === 0) return `${bytes / size} ${unit}`;
  }
  return `${bytes} bytes`;
}

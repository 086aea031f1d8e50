import { SourceFormatError } from './source-data.js';

export { DEFAULT_MAX_BYTES } from './defaults.js';

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
 * A source document's bytes, gathered as they arrive and counted (each chunk
 * must be memory of its own, never reused for the next): past
 * `maxBytes` decoded bytes it throws at once (the caller's stream is then
 * cancelled, so the sender is cut off there too). The bytes come back in an
 * ArrayBuffer of their own, to be moved to a parse thread (parse-threads.ts)
 * rather than copied; nothing of the document is parsed on the event loop.
 */
export async function readBytes(chunks: AsyncIterable<Uint8Array>, maxBytes: number, what: 'response' | 'file'): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let bytes = 0;
  for await (const chunk of chunks) {
    bytes += chunk.byteLength;
    if (bytes > maxBytes) throw new DocumentTooLargeError(maxBytes, what);
    parts.push(chunk);
  }
  const whole = new Uint8Array(bytes);
  let at = 0;
  for (const part of parts) {
    whole.set(part, at);
    at += part.byteLength;
  }
  return whole;
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

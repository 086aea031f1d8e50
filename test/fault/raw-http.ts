/**
 * HTTP over bare TCP for fault tests: send exactly the bytes given (however
 * malformed), read what comes back, and parse the responses in it.
 */
import { connect, type Socket } from 'node:net';

export interface RawResponse {
  status: number;
  /** Header names lowercased; a repeated header keeps its last value. */
  headers: Record<string, string>;
  body: Buffer;
}

export interface RawExchange {
  /** Final responses, in order (interim 1xx ones skipped). */
  responses: RawResponse[];
  /** Bytes that did not parse as a response. */
  garbage: string;
  /** The server closed the connection (rather than our timeout cutting it). */
  closedByServer: boolean;
  ms: number;
}

/**
 * Connect, write `bytes`, and read until the server closes, until a complete
 * final response is in (when `stopAfterResponse`), or `timeoutMs`.
 */
export function exchange(port: number, bytes: Buffer | string, options: { head?: boolean; timeoutMs?: number; stopAfterResponse?: boolean } = {}): Promise<RawExchange> {
  const started = Date.now();
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (closedByServer: boolean, socket: Socket) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ ...parseResponses(Buffer.concat(chunks), options.head ?? false), closedByServer, ms: Date.now() - started });
    };
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    const timer = setTimeout(() => finish(false, socket), options.timeoutMs ?? 8000);
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      if (options.stopAfterResponse && parseResponses(Buffer.concat(chunks), options.head ?? false).complete) finish(false, socket);
    });
    socket.on('error', () => finish(true, socket));
    socket.on('close', () => finish(true, socket));
  });
}

/** Parse consecutive HTTP/1.1 responses; `head`: bodies are absent whatever content-length says. */
export function parseResponses(data: Buffer, head: boolean): { responses: RawResponse[]; garbage: string; complete: boolean } {
  const responses: RawResponse[] = [];
  let offset = 0;
  let complete = false;
  while (offset < data.length) {
    const end = data.indexOf('\r\n\r\n', offset);
    if (end === -1) break;
    const lines = data.subarray(offset, end).toString('latin1').split('\r\n');
    const statusLine = /^HTTP\/1\.[01] (\d{3})(?: .*)?$/.exec(lines[0]!);
    if (!statusLine) break;
    const status = Number(statusLine[1]);
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const interim = status >= 100 && status < 200;
    const length = head || interim || status === 204 || status === 304 ? 0 : Number(headers['content-length'] ?? 0);
    if (end + 4 + length > data.length) break;
    if (!interim) {
      responses.push({ status, headers, body: data.subarray(end + 4, end + 4 + length) });
      complete = true;
    }
    offset = end + 4 + length;
  }
  return { responses, garbage: data.subarray(offset).toString('latin1'), complete };
}

/** Every way an answer can fall short of the contract, as readable strings (empty: none). */
export function contractViolations(response: RawResponse, head: boolean): string[] {
  const problems: string[] = [];
  if (response.status >= 500 && response.status !== 503) problems.push(`status ${response.status}`);
  const requestId = response.headers['x-request-id'];
  if (!requestId) problems.push(`${response.status} without x-request-id`);
  if (response.status < 400) return problems;
  if (response.headers['cache-control'] !== 'no-store') problems.push(`${response.status} with cache-control ${response.headers['cache-control']}`);
  if (!/^application\/json; charset=utf-8$/.test(response.headers['content-type'] ?? '')) problems.push(`${response.status} with content-type ${response.headers['content-type']}`);
  if (head) return problems;
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(response.body.toString('utf8')) as Record<string, unknown>;
  } catch {
    return [...problems, `${response.status} body is not JSON: ${response.body.toString('latin1').slice(0, 120)}`];
  }
  const keys = Object.keys(body).join(',');
  if (keys !== 'success,status,generated_at,error,message,request_id') problems.push(`${response.status} envelope keys ${keys}`);
  if (body.success !== false || body.status !== 'error') problems.push(`${response.status} envelope success/status ${String(body.success)}/${String(body.status)}`);
  if (typeof body.error !== 'string' || !/^[A-Z_]+$/.test(body.error)) problems.push(`${response.status} error code ${String(body.error)}`);
  if (typeof body.message !== 'string' || body.message === '') problems.push(`${response.status} without a message`);
  if (body.request_id !== requestId) problems.push(`${response.status} request_id ${String(body.request_id)} vs header ${requestId}`);
  if (typeof body.generated_at !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/.test(body.generated_at)) problems.push(`${response.status} generated_at ${String(body.generated_at)}`);
  return problems;
}

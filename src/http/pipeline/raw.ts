import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { requestIdFor } from '../context.js';
import type { KeyedEndpoint } from './endpoint.js';
import { readExchange } from './exchange.js';
import { serveKeyed, type Pipeline } from './keyed.js';

/**
 * The keyed endpoints marked `raw` (detail, the catalogue and the webservice endpoint: what boards and
 * apps poll all day) answered straight on node:http, before Fastify routes
 * them, through the same pipeline as the Fastify adapter, minus the
 * framework's per-request machinery. Anything outside the plain case (another
 * method, `%`, `/` or `#` in the segment, `#` anywhere, a server shutting
 * down or with a full heap) returns false and goes to Fastify, which answers it
 * the same way (a parity test holds the two together).
 */
export function createRawPath(pipeline: Pipeline, endpoints: readonly KeyedEndpoint[]): (request: IncomingMessage, response: ServerResponse) => boolean {
  const exact = endpoints.filter((endpoint) => endpoint.raw && !endpoint.segment);
  const segmented = endpoints.filter((endpoint) => endpoint.raw && endpoint.segment);
  const spelt = exact.flatMap((endpoint) => (endpoint.spellings ?? []).map((spelling) => ({ spelling, endpoint })));
  const state = pipeline.state;
  return (request, response) => {
    if (request.method !== 'GET' || state.closing || state.underPressure) return false;
    const url = request.url!;
    const question = url.indexOf('?');
    const pathEnd = question === -1 ? url.length : question;
    let endpoint: KeyedEndpoint | null = null;
    for (let i = 0; i < exact.length && endpoint === null; i++) {
      if (pathEnd === exact[i]!.path.length && url.startsWith(exact[i]!.path)) endpoint = exact[i]!;
    }
    for (let i = 0; i < spelt.length && endpoint === null; i++) {
      if (pathEnd === spelt[i]!.spelling.length && url.startsWith(spelt[i]!.spelling)) endpoint = spelt[i]!.endpoint;
    }
    for (let i = 0; i < segmented.length && endpoint === null; i++) {
      if (plainSegment(url, segmented[i]!.segment!, pathEnd)) endpoint = segmented[i]!;
    }
    if (endpoint === null || (question !== -1 && url.indexOf('#', question) !== -1)) return false;
    serve(pipeline, endpoint, request, response, url, question);
    return true;
  };
}

/**
 * Whether the path is the route's prefix, a plain segment (no `%`, `/` or
 * `#`: Fastify's route answers those) and its suffix. Native `indexOf` scans
 * are about eight times cheaper than a character loop over a ten-key segment.
 */
function plainSegment(url: string, segment: { prefix: string; suffix: string }, pathEnd: number): boolean {
  const from = segment.prefix.length;
  const end = pathEnd - segment.suffix.length;
  if (end < from || !url.startsWith(segment.prefix) || (segment.suffix !== '' && !url.startsWith(segment.suffix, end))) return false;
  return !holds(url, '%', from, end) && !holds(url, '/', from, end) && !holds(url, '#', from, end);
}

function holds(url: string, char: string, from: number, end: number): boolean {
  const at = url.indexOf(char, from);
  return at !== -1 && at < end;
}

/** `question`: where the `?` is in the URL, or -1. */
function serve(pipeline: Pipeline, endpoint: KeyedEndpoint, request: IncomingMessage, response: ServerResponse, url: string, question: number): void {
  const started = performance.now();
  const exchange = readExchange(request.rawHeaders, 'GET', url, question, request.socket.remoteAddress ?? '', pipeline.deps.time.now(), started);
  exchange.requestId = requestIdFor(exchange.requestId);
  // HTTP/1.0 needs no Host.
  if (request.httpVersionMinor === 0) exchange.hasHost = true;
  if (!exchange.hasBody) skipDrain(request);
  serveKeyed(pipeline, endpoint, exchange, response);
}

/**
 * When a response finishes, Node drains a request nobody read by resuming its
 * stream, which ends and destroys it over several ticks: about a tenth of
 * this endpoint's cost. A GET without a body has nothing to drain, so mark it
 * drained. `_dumped` is the flag Node's own drain sets (body bytes arriving
 * for a drained request are dropped, never buffered); were it ever renamed,
 * this would only cost the saving, not correctness.
 */
function skipDrain(request: IncomingMessage): void {
  (request as IncomingMessage & { _dumped: boolean })._dumped = true;
}

import { isDeepStrictEqual } from 'node:util';
import { DEFAULT_MESSAGES, ERROR_STATUS, type ErrorCode } from '../domain/errors.js';

/**
 * The finishing pass over the document @fastify/swagger generates from the
 * route schemas: what the routes do not declare one by one but every reader of
 * the document needs (servers, operation ids, security on every operation, the
 * headers the service sends, 304/405/503 and HEAD). Done here, once, so a new
 * route gets all of it without repeating it.
 */

type Json = Record<string, unknown>;
interface Operation extends Json {
  responses: Record<string, Json>;
  security?: unknown[];
}

const header = (description: string, schema: Json = { type: 'string' }) => ({ description, schema });

export const RESPONSE_HEADERS: Record<string, Json> = {
  'X-Request-Id': header('The request id (yours if you sent a valid one, else generated); also in error bodies as `request_id`.'),
  ETag: header('Validator of the body; send it back in If-None-Match to get 304 when nothing changed.'),
  'Cache-Control': header('How long the answer may be reused: until the next refresh of your plan for rates, no-store for errors.'),
  RateLimit: header('The window to pace by (IETF draft): `"<window>";r=<remaining>;t=<seconds to reset>`. The day when the minute limit would spend what is left of it before midnight, else the minute; a spent window while it is spent. The same window answer after answer until the other one binds.'),
  'RateLimit-Policy': header('Your plan\'s limits (IETF draft), e.g. `"minute";q=60;w=60, "day";q=10000;w=86400`.'),
  'X-RateLimit-Limit': header('Requests allowed in the window `RateLimit` names.', { type: 'integer' }),
  'X-RateLimit-Remaining': header('Requests left in the window `RateLimit` names.', { type: 'integer' }),
  'X-RateLimit-Reset': header('Seconds until the window `RateLimit` names resets.', { type: 'integer' }),
  'Retry-After': header('Seconds to wait before retrying.', { type: 'integer' }),
  Allow: header('The methods the service answers: GET, HEAD, OPTIONS.'),
};

const ref = (name: string) => ({ $ref: `#/components/headers/${name}` });
const RATE_LIMIT = ['RateLimit', 'RateLimit-Policy', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'];

/** Which headers each status carries; keyed operations also carry the rate-limit headers. */
function headersFor(status: string, keyed: boolean, conditional: boolean): string[] {
  const names = ['X-Request-Id'];
  if (status === '200') names.push('Cache-Control', ...(conditional ? ['ETag'] : []), ...(keyed ? RATE_LIMIT : []));
  if (status === '304') names.push('ETag', 'Cache-Control', ...RATE_LIMIT);
  if (status === '429') names.push('Retry-After', ...RATE_LIMIT);
  if (status === '503') names.push('Retry-After');
  if (status === '405') names.push('Allow');
  return names;
}

const ERROR_REF = { $ref: '#/components/schemas/Error' };
const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: ERROR_REF } } });
const DESCRIPTIONS: Record<string, string> = {
  '200': 'OK',
  '304': 'Not modified: the ETag sent in If-None-Match still matches; no body.',
  '400': 'Bad request: an unknown or invalid parameter.',
  '401': 'No key, or a key that is unknown, revoked or expired.',
  '403': 'The key\'s plan or account does not allow this.',
  '404': 'Not found.',
  '405': 'Method not allowed: only GET, HEAD and OPTIONS are answered.',
  '429': 'Too many requests: wait for Retry-After.',
  '503': 'Unavailable: overloaded, shutting down, not ready, or the store that usage and history are read from does not answer; retry after Retry-After.',
};

/** `get /v1/rates/{keys}` → `getRatesByKeys`: stable, unique and URL-safe. */
export function operationIdOf(method: string, path: string): string {
  const words = path
    .split('/')
    .filter((part) => part && part !== 'v1')
    .map((part) => (part.startsWith('{') ? `By_${part.slice(1, -1)}` : part));
  return method + words.map((word) => word.split(/[_.-]/).map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('')).join('');
}

export function finishDocument<T extends object>(document: T, servers: { url: string; description: string }[]): T {
  const open = document as Json;
  const components = (open.components ?? {}) as Json;
  const schemas = (components.schemas ?? {}) as Record<string, Json>;
  const paths = (open.paths ?? {}) as Record<string, Record<string, Operation>>;

  for (const [path, item] of Object.entries(paths)) {
    const get = item.get;
    if (!get) continue;
    // Keyed: an API key is asked for (the rate-limit headers come with it); /metrics's optional bearer token is not one.
    const keyed = Array.isArray(get.security) && get.security.some((requirement) => typeof requirement === 'object' && requirement !== null && 'apiKey' in requirement);
    if (!keyed) get.security = [];
    get.operationId ??= operationIdOf('get', path);
    get.responses['400'] ??= errorResponse(DESCRIPTIONS['400']!);
    get.responses['405'] ??= errorResponse(DESCRIPTIONS['405']!);
    get.responses['503'] ??= errorResponse(DESCRIPTIONS['503']!);
    for (const [status, response] of Object.entries(get.responses)) {
      if (response.description === 'Default Response' && DESCRIPTIONS[status]) response.description = DESCRIPTIONS[status];
      for (const media of Object.values((response.content ?? {}) as Record<string, Json>)) {
        const name = Object.keys(schemas).find((candidate) => isDeepStrictEqual(withoutId(schemas[candidate]!), withoutId(media.schema as Json)));
        if (name) media.schema = { $ref: `#/components/schemas/${name}` };
      }
      response.headers = { ...Object.fromEntries(headersFor(status, keyed, '304' in get.responses).map((name) => [name, ref(name)])), ...((response.headers ?? {}) as Json) };
    }
    // Fastify answers HEAD for every GET route: the same answer without a body.
    item.head ??= {
      ...get,
      operationId: operationIdOf('head', path),
      summary: `${String(get.summary ?? '')} (headers only)`.trim(),
      responses: Object.fromEntries(Object.entries(get.responses).map(([status, response]) => [status, { description: response.description, headers: response.headers }])),
    };
  }

  components.headers = RESPONSE_HEADERS;
  components.schemas = usedSchemas(schemas, paths);
  return { ...document, servers, components } as T;
}

function withoutId(schema: Json | undefined): Json | undefined {
  if (!schema || typeof schema !== 'object') return schema;
  const { $id: _id, ...rest } = schema;
  return rest;
}

/** Only the schemas something refers to, directly or through another schema. */
function usedSchemas(schemas: Record<string, Json>, paths: unknown): Record<string, Json> {
  const used = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (value && typeof value === 'object') {
      for (const [key, inner] of Object.entries(value)) {
        if (key === '$ref' && typeof inner === 'string' && inner.startsWith('#/components/schemas/')) {
          const name = inner.slice('#/components/schemas/'.length);
          if (!used.has(name)) {
            used.add(name);
            visit(schemas[name]);
          }
        } else visit(inner);
      }
    }
  };
  visit(paths);
  return Object.fromEntries(Object.entries(schemas).filter(([name]) => used.has(name)));
}

/** The document's description: how to call, then the error codes and headers, generated from the code that uses them. */
export function apiDescription(): string {
  const errors = (Object.keys(ERROR_STATUS) as ErrorCode[]).map((code) => `| \`${code}\` | ${ERROR_STATUS[code]} | ${DEFAULT_MESSAGES[code]} |`);
  const headers = Object.entries(RESPONSE_HEADERS).map(([name, h]) => `| \`${name}\` | ${String(h.description).replace(/\|/g, '\\|')} |`);
  return [
    'Read-only market rates for gold, coins, currencies, metals, energy and crypto, mostly in Iranian rial.',
    'Send your key in the `x-api-key` header. Only GET, HEAD and OPTIONS are answered.',
    '',
    '## Errors',
    'Every error has the same body: `{success: false, status: "error", generated_at, error, message, request_id}`. `error` is one of:',
    '',
    '| error | HTTP status | meaning |',
    '| --- | --- | --- |',
    ...errors,
    '',
    '## Response headers',
    '',
    '| header | meaning |',
    '| --- | --- |',
    ...headers,
  ].join('\n');
}

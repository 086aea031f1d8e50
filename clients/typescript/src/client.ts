import createClient, { type Client } from 'openapi-fetch';
import { NerkhError } from './errors.js';
import { metaOf, type ResponseMeta } from './meta.js';
import { DEFAULT_RETRY, retryDelay, sleep, type RetryPolicy } from './retry.js';
import type { paths } from './schema.js';
import { RateStream, type StreamOptions } from './stream.js';
import type { CatalogueResponse, HistoryResponse, QueryOf, RatesResponse, StatusResponse, UsageResponse } from './types.js';

export type FetchLike = (request: Request) => Promise<Response>;

export interface NerkhClientOptions {
  /** Where the API is, e.g. `https://rates.example.com` (no /v1). */
  baseUrl: string;
  /** Sent as `x-api-key` on every request. */
  apiKey?: string;
  /** A fetch of your own (tests, proxies, instrumentation); it receives a Request. Default: the global fetch. */
  fetch?: FetchLike;
  /** Retries of 429/503 answers (default 2). */
  retries?: number;
  /** The longest wait for one retry in ms (default 10 000); a longer Retry-After is thrown at once. */
  maxRetryWaitMs?: number;
  /** Extra headers on every request. */
  headers?: Record<string, string>;
}

/** A body and what its headers said. */
export interface NerkhResponse<T> {
  data: T;
  meta: ResponseMeta;
}

interface CallOptions {
  signal?: AbortSignal;
}

/** A moment as the server reads it: a Date is sent as its ISO text. */
type Moment = string | Date;

export type CatalogueOptions = QueryOf<'getRates'> & CallOptions;
export type RatesOptions = Omit<QueryOf<'getRatesByKeys'>, 'at'> & CallOptions & {
  /** The values as served at this moment (service `history`); a date alone means that day's close. */
  at?: Moment;
};
export type HistoryOptions = Omit<QueryOf<'getRatesByKeyHistory'>, 'from' | 'to'> & CallOptions & { from?: Moment; to?: Moment };
export type UsageOptions = QueryOf<'getUsage'> & CallOptions;

/** openapi-fetch's answer, as far as the facade reads it. */
interface Sent<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/**
 * The Nerkh API in a few methods. Every method resolves to `{ data, meta }`
 * or throws a NerkhError; 429 and 503 are retried after the server's
 * Retry-After while it stays within `maxRetryWaitMs`. For anything the facade
 * does not cover, `api` is the typed openapi-fetch client underneath.
 */
export class NerkhClient {
  readonly api: Client<paths>;
  private readonly retry: RetryPolicy;
  private readonly fetcher: FetchLike;

  constructor(private readonly options: NerkhClientOptions) {
    this.fetcher = options.fetch ?? ((request) => globalThis.fetch(request));
    this.retry = { retries: options.retries ?? DEFAULT_RETRY.retries, maxWaitMs: options.maxRetryWaitMs ?? DEFAULT_RETRY.maxWaitMs };
    this.api = createClient<paths>({ baseUrl: options.baseUrl, fetch: this.fetcher, headers: this.headers() });
  }

  /** The references you can ask for (no prices). */
  catalogue(options: CatalogueOptions = {}): Promise<NerkhResponse<CatalogueResponse>> {
    const { signal, ...query } = options;
    return this.call(signal, () => this.api.GET('/v1/rates', { params: { query }, signal }));
  }

  /** Current prices of one to ten references (keys or aliases); with `at`, as they were served then. */
  rates(keys: string | readonly string[], options: RatesOptions = {}): Promise<NerkhResponse<RatesResponse>> {
    const { signal, at, ...rest } = options;
    const query = at === undefined ? rest : { ...rest, at: moment(at) };
    const list = typeof keys === 'string' ? keys : keys.join(',');
    // `at` is served by the detail route but not yet declared on it in the document, hence the widening.
    const params = { path: { keys: list }, query: query as never };
    return this.call(signal, () => this.api.GET('/v1/rates/{keys}', { params, signal }));
  }

  /** Candles (open, high, low, close) of one reference. */
  history(key: string, options: HistoryOptions = {}): Promise<NerkhResponse<HistoryResponse>> {
    const { signal, from, to, ...rest } = options;
    const query = { ...rest, ...(from === undefined ? {} : { from: moment(from) }), ...(to === undefined ? {} : { to: moment(to) }) };
    return this.call(signal, () => this.api.GET('/v1/rates/{key}/history', { params: { path: { key }, query }, signal }));
  }

  /** Your account's requests and errors per day and service, limits and allowance. */
  usage(options: UsageOptions = {}): Promise<NerkhResponse<UsageResponse>> {
    const { signal, ...query } = options;
    return this.call(signal, () => this.api.GET('/v1/usage', { params: { query }, signal }));
  }

  /** The sources' health and the service's state. */
  status(options: CallOptions = {}): Promise<NerkhResponse<StatusResponse>> {
    return this.call(options.signal, () => this.api.GET('/v1/status', { signal: options.signal }));
  }

  /**
   * Push stream over Server-Sent Events: iterate it with `for await`. A
   * `snapshot` comes first (and again after every reconnect), then `rates`
   * with only what changed. Breaking out of the loop, or aborting `signal`,
   * closes the connection.
   */
  stream(options: StreamOptions = {}): RateStream {
    return new RateStream({ baseUrl: this.options.baseUrl, headers: this.headers(), fetch: this.fetcher, retry: this.retry }, options);
  }

  private headers(): Record<string, string> {
    return { ...this.options.headers, ...(this.options.apiKey === undefined ? {} : { 'x-api-key': this.options.apiKey }) };
  }

  /** One request with the retry policy: data on success, a NerkhError otherwise. */
  private async call<T>(signal: AbortSignal | undefined, send: () => Promise<Sent<T>>): Promise<NerkhResponse<T>> {
    for (let attempt = 0; ; attempt++) {
      let sent: Sent<T>;
      try {
        sent = await send();
      } catch (cause) {
        if (signal?.aborted) throw cause;
        throw NerkhError.network(cause);
      }
      if (sent.response.ok && sent.data !== undefined) return { data: sent.data, meta: metaOf(sent.response) };
      const error = NerkhError.fromResponse(sent.response, sent.error);
      const wait = retryDelay(error, attempt, this.retry);
      if (wait === null) throw error;
      await sleep(wait, signal);
    }
  }
}

function moment(value: Moment): string {
  return typeof value === 'string' ? value : value.toISOString();
}

import createClient, { type Client } from 'openapi-fetch';
import { NerkhError } from './errors.js';
import { metaOf, type ResponseMeta } from './meta.js';
import { DEFAULT_RETRY, retryDelay, sleep, type RetryPolicy } from './retry.js';
import type { paths } from './schema.js';
import { RateStream, type AlertingStreamEvent, type StreamOptions } from './stream.js';
import type { CalendarResponse, CatalogueResponse, ConvertResponse, HistoryResponse, JewelleryResponse, QueryOf, RatesResponse, StatusResponse, UsageResponse } from './types.js';

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
  /**
   * The values as served at this moment (service `history`): each the close of the last candle that
   * ended by then, with its own `updated_at`; a date alone means that day's close. Not in the future.
   */
  at?: Moment;
};
export type HistoryOptions = Omit<QueryOf<'getRatesByKeyHistory'>, 'from' | 'to'> & CallOptions & { from?: Moment; to?: Moment };
export type UsageOptions = QueryOf<'getUsage'> & CallOptions;
export type CalendarOptions = QueryOf<'getCalendar'> & CallOptions;
/**
 * A decimal the server reads digit for digit: a string is sent as it is; a
 * number as JavaScript writes it (`String(n)`), which is fine for ordinary
 * figures but may be an exponent (`1e-7`) the server refuses.
 */
export type DecimalInput = string | number;
export type ConvertOptions = Omit<QueryOf<'getConvert'>, 'from' | 'to' | 'amount'> & CallOptions;
type JewelleryQuery = QueryOf<'getJewellery'>;
export type JewelleryOptions = Omit<JewelleryQuery, 'weight' | 'making_percent' | 'profit_percent' | 'vat_percent' | 'karat'> &
  CallOptions & {
    /** Grams. */
    weight: DecimalInput;
    /** 18 (default), 21, 22 or 24. */
    karat?: JewelleryQuery['karat'] | 18 | 21 | 22 | 24;
    /** Making charge, percent of the gold (required: it differs from piece to piece). */
    making_percent: DecimalInput;
    /** Default 7. */
    profit_percent?: DecimalInput;
    /** Default 10. */
    vat_percent?: DecimalInput;
  };

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

  /**
   * `amount` of `from` counted in `to` (each a reference key or alias, `IRR` or `IRT`; both priced in
   * one currency): exact when the quotient terminates, else rounded half-even to 6 decimals.
   */
  convert(from: string, to: string, amount: DecimalInput, options: ConvertOptions = {}): Promise<NerkhResponse<ConvertResponse>> {
    const { signal, ...rest } = options;
    const query = { ...rest, from, to, amount: String(amount) };
    return this.call(signal, () => this.api.GET('/v1/convert', { params: { query }, signal }));
  }

  /** The customary price of a gold piece (gold, making, profit, VAT, total) from the current gram price of its karat. */
  jewellery(options: JewelleryOptions): Promise<NerkhResponse<JewelleryResponse>> {
    const { signal, weight, karat, making_percent, profit_percent, vat_percent, ...rest } = options;
    const query = {
      ...rest,
      weight: String(weight),
      making_percent: String(making_percent),
      ...(karat === undefined ? {} : { karat: String(karat) as JewelleryQuery['karat'] }),
      ...(profit_percent === undefined ? {} : { profit_percent: String(profit_percent) }),
      ...(vat_percent === undefined ? {} : { vat_percent: String(vat_percent) }),
    };
    return this.call(signal, () => this.api.GET('/v1/jewellery', { params: { query }, signal }));
  }

  /** The days a market is closed (weekly closures, holidays, operators' closures), Gregorian and Jalali, with the reason. */
  calendar(options: CalendarOptions = {}): Promise<NerkhResponse<CalendarResponse>> {
    const { signal, ...query } = options;
    return this.call(signal, () => this.api.GET('/v1/calendar', { params: { query }, signal }));
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
   * `snapshot` comes first (and again after every reconnect, or when a plan
   * change alters what the stream follows), then `rates` with only what
   * changed. A stream the server ends (its daily lifetime) is reopened; one
   * ended because the key was revoked or the account suspended ends the
   * loop with that refusal, as its reconnect is refused. Breaking out of the
   * loop, or aborting `signal`, closes the connection. With `alerts`, the
   * loop also yields `alert` events (typed: narrow on `event.type`).
   */
  stream(options: StreamOptions & { alerts: string | readonly string[] }): RateStream<AlertingStreamEvent>;
  stream(options?: StreamOptions & { alerts?: undefined }): RateStream;
  stream(options: StreamOptions): RateStream<AlertingStreamEvent>;
  stream(options: StreamOptions = {}): RateStream<AlertingStreamEvent> {
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

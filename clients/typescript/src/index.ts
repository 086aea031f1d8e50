export { NerkhClient, type NerkhClientOptions, type NerkhResponse, type CatalogueOptions, type RatesOptions, type HistoryOptions, type UsageOptions, type ConvertOptions, type JewelleryOptions, type CalendarOptions, type DecimalInput, type FetchLike } from './client.js';
export { NerkhError, NETWORK_ERROR, UNKNOWN_ERROR, parseRetryAfter, type NerkhErrorCode } from './errors.js';
export type { ResponseMeta, RateLimit } from './meta.js';
export { RateStream, type AlertingStreamEvent, type StreamAlert, type StreamAlertEvent, type StreamEvent, type StreamOptions, type StreamPayload } from './stream.js';
export type * from './types.js';
export type { paths, components, operations } from './schema.js';

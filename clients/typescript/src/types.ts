/** Friendly names for the generated types (schema.ts), so callers never spell `components["schemas"]`. */
import type { components, operations } from './schema.js';

type Schemas = components['schemas'];

export type Rate = Schemas['Rate'];
export type Reference = Schemas['Reference'];
export type Candle = Schemas['Candle'];
export type CatalogueResponse = Schemas['CatalogueResponse'];
export type RatesResponse = Schemas['DetailResponse'];
export type HistoryResponse = Schemas['HistoryResponse'];
export type ConvertResponse = Schemas['ConvertResponse'];
export type JewelleryResponse = Schemas['JewelleryResponse'];
export type CalendarResponse = Schemas['CalendarResponse'];
export type Market = Schemas['Market'];
export type UsageResponse = Schemas['UsageResponse'];
export type StatusResponse = Schemas['StatusResponse'];
export type ErrorEnvelope = Schemas['Error'];
/** Every error code the server documents. */
export type ErrorCode = ErrorEnvelope['error'];

/**
 * The query an operation documents, as an object type ({} when it takes none).
 * Options that the server adds to its document reach the client's methods
 * with the next `npm run generate`.
 */
export type QueryOf<Id extends keyof operations> = operations[Id]['parameters'] extends { query?: infer Q } ? ([NonNullable<Q>] extends [never] ? object : NonNullable<Q>) : object;

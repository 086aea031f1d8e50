import type { TSchema } from '@sinclair/typebox';
import { SHARED_SCHEMAS } from '../schemas.js';
import type { EndpointModule } from './module.js';
import { endpoint as catalogue } from './catalogue/route.js';
import { endpoint as detail } from './detail/route.js';
import { endpoint as history } from './history/route.js';
import { endpoint as convert } from './convert/route.js';
import { endpoint as jewellery } from './jewellery/route.js';
import { endpoint as calendar } from './calendar/route.js';
import { endpoint as stream } from './stream/route.js';
import { endpoint as status } from './status/route.js';
import { endpoint as webservice } from './webservice/route.js';
import { endpoint as usage } from './usage/route.js';
import { endpoint as webhooks } from './webhooks/route.js';
import { endpoint as navasanLatest } from './compat/navasan-latest/route.js';
import { endpoint as navasanOhlcSearch } from './compat/navasan-ohlc-search/route.js';
import { endpoint as navasanUsage } from './compat/navasan-usage/route.js';
import { endpoint as brsapiGoldCurrency } from './compat/brsapi-gold-currency/route.js';

/**
 * Every endpoint that takes a key, one folder each, in the order the API
 * document lists them. The app registers these and nothing else; the route
 * list, the document (and the client generated from it) and the security
 * suite's table are all made from this list (docs/ARCHITECTURE.md#how-to-add-an-endpoint).
 */
export const ENDPOINTS: readonly EndpointModule[] = [
  catalogue,
  detail,
  history,
  convert,
  jewellery,
  calendar,
  stream,
  status,
  webservice,
  usage,
  webhooks,
  navasanLatest,
  navasanOhlcSearch,
  navasanUsage,
  brsapiGoldCurrency,
];

/** Every schema with an `$id` the API's answers refer to: the shared ones (schemas.ts), then each endpoint's own (its schema.ts). */
export const API_SCHEMAS: TSchema[] = [...SHARED_SCHEMAS, ...ENDPOINTS.flatMap((endpoint) => endpoint.schemas ?? [])];

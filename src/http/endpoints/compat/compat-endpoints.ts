import { BrsapiMarket } from '../../../compat/brsapi-market.js';
import { NavasanLatest } from '../../../compat/navasan-latest.js';
import type { AppDeps } from '../../deps.js';
import type { KeyedEndpoint } from '../../pipeline/endpoint.js';
import type { UsageReports } from '../usage-reports.js';
import { brsapiGoldCurrencyEndpoint } from './brsapi-gold-currency.js';
import { navasanLatestEndpoint } from './navasan-latest.js';
import { navasanOhlcSearchEndpoint } from './navasan-ohlc-search.js';
import { navasanUsageEndpoint } from './navasan-usage.js';

/** The drop-in routes for navasan and BrsApi clients (docs/switching.md), in the order the API document lists them. */
export function compatEndpoints(deps: AppDeps, usage: UsageReports): KeyedEndpoint[] {
  const latest = new NavasanLatest(deps.catalogue, deps.time);
  return [navasanLatestEndpoint(deps, latest), navasanOhlcSearchEndpoint(deps, latest), navasanUsageEndpoint(usage), brsapiGoldCurrencyEndpoint(deps, new BrsapiMarket(deps.catalogue, deps.time))];
}

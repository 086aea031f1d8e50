import type { HistoryAnswers } from '../../history/answers/history-answers.js';
import type { ServiceStatus } from '../../render/status.js';
import type { AppDeps } from '../deps.js';
import type { KeyedEndpoint } from '../pipeline/endpoint.js';
import { calendarEndpoint } from './calendar.js';
import { catalogueEndpoint } from './catalogue.js';
import { compatEndpoints } from './compat/compat-endpoints.js';
import { convertEndpoint } from './convert.js';
import { detailEndpoint } from './detail.js';
import { historyEndpoint } from './history.js';
import { jewelleryEndpoint } from './jewellery.js';
import { statusEndpoint } from './status.js';
import { streamEndpoint, type Streams } from './stream.js';
import { usageEndpoint } from './usage.js';
import { UsageReports } from './usage-reports.js';
import { webhooksEndpoint } from './webhooks.js';
import { webserviceEndpoint } from './webservice.js';

/** Every endpoint that takes a key, in the order the API document lists them. */
export function keyedEndpoints(deps: AppDeps, streams: Streams, status: (now: number) => ServiceStatus, historyAnswers: HistoryAnswers): KeyedEndpoint[] {
  // One reader of usage for /v1/usage and navasan's /usage/: the same reads answer both.
  const usage = new UsageReports(deps);
  return [catalogueEndpoint(deps), detailEndpoint(deps), historyEndpoint(deps, historyAnswers), convertEndpoint(deps), jewelleryEndpoint(deps), calendarEndpoint(deps), streamEndpoint(deps, streams), statusEndpoint(deps, status), webserviceEndpoint(deps), usageEndpoint(usage), webhooksEndpoint(deps), ...compatEndpoints(deps, usage)];
}

import { etagOf, fnv1a } from '../domain/hash.js';
import { formatAge, type ZoneTime } from '../domain/time.js';
import type { NodeInfo } from '../bus/nodes.js';
import type { RecordingState } from '../history/record/recording-state.js';
import type { Snapshot } from '../live/snapshot.js';
import { DROP_REASON_TEXT } from '../sources/drops.js';
import type { SourceHealth, SourceState } from '../sources/monitor.js';
import type { StoreState } from '../store/store-health.js';
import { okHead } from './envelope.js';

export interface EndpointState {
  name: string;
  path: string;
  state: SourceState;
}

/** The processes serving this deployment, as one node sees them (docs/api.md#status). */
export interface ClusterState {
  /** This node's id. */
  self: string;
  /** Every live node; one (this one) without Redis. */
  nodes: readonly NodeInfo[];
  /** Redis as this node reaches it; null when the service runs without Redis. */
  redis: 'active' | 'down' | null;
  /** Snapshot messages this node refused since start (see bus/wire-check.ts). */
  refusedSnapshots: number;
}

/** What this node says of the history (candles) and the push stream, besides their endpoints' state. */
export interface StatusParts {
  history: RecordingState;
  /** Push streams open on this node. */
  openStreams: number;
}

export interface ServiceStatus {
  service: { state: SourceState; message: string };
  last_check: number | null;
  last_update: number | null;
  endpoints: EndpointState[];
  store: StoreState;
  sources: SourceHealth[];
  nodes: readonly NodeInfo[];
  redis: 'active' | 'down' | null;
  history: RecordingState & { state: SourceState };
  stream: { state: SourceState; open: number };
}

export const PUBLIC_ENDPOINTS = [
  { name: 'catalogue', path: '/v1/rates' },
  { name: 'detail', path: '/v1/rates/{keys}' },
  { name: 'history', path: '/v1/rates/{key}/history' },
  { name: 'stream', path: '/v1/stream' },
  { name: 'status', path: '/v1/status' },
  { name: 'usage', path: '/v1/usage' },
  { name: 'webservice', path: '/webservice/{username}' },
] as const;

/**
 * Health of the whole service from its parts: rate endpoints (the push stream
 * among them) are down with no usable data, degraded while some rate is
 * served stale; the store-backed usage endpoint follows the store. History is
 * down while the store is (queries fail; candles wait in memory), degraded
 * while no node records (several nodes, none leading ingest). With several
 * nodes, Redis out of reach or no ingest leader among the live nodes degrades
 * the service too (values then stop moving). The banner is "all services
 * active" only when every endpoint and every source is active.
 */
export function computeStatus(snapshot: Snapshot, sources: SourceHealth[], store: StoreState, cluster: ClusterState | null, parts: StatusParts): ServiceStatus {
  const anyData = snapshot.counts.ok + snapshot.counts.stale > 0;
  const rateState: SourceState = !anyData ? 'down' : snapshot.counts.stale > 0 ? 'degraded' : 'active';
  const leaderless = cluster !== null && !cluster.nodes.some((node) => node.leader);
  const historyState: SourceState = !store.reachable ? 'down' : leaderless ? 'degraded' : 'active';
  const stateOf: Record<string, SourceState> = {
    catalogue: 'active',
    detail: rateState,
    history: historyState,
    stream: rateState,
    status: 'active',
    usage: store.reachable ? 'active' : 'degraded',
    webservice: rateState,
  };
  const endpoints = PUBLIC_ENDPOINTS.map(({ name, path }) => ({ name, path, state: stateOf[name]! }));
  const storePart = { name: 'store', state: (store.reachable ? 'active' : 'down') as SourceState };
  const shared: { name: string; state: SourceState }[] = [];
  if (cluster?.redis === 'down') shared.push({ name: 'redis', state: 'down' });
  else if (leaderless) shared.push({ name: 'ingest', state: 'down' });
  const troubled = [storePart, ...shared, ...endpoints, ...sources].filter((part) => part.state !== 'active');
  let state: SourceState = 'active';
  let message = 'all services active';
  if (!anyData || (sources.length > 0 && sources.every((s) => s.state === 'down'))) {
    state = 'down';
    message = 'no live data available';
  } else if (troubled.length > 0) {
    state = 'degraded';
    message = `degraded: ${troubled.map((part) => `${part.name} ${part.state}`).join(', ')}`;
  }
  const checks = sources.map((s) => s.last_check).filter((t): t is number => t !== null);
  return {
    service: { state, message },
    last_check: checks.length > 0 ? Math.max(...checks) : null,
    last_update: snapshot.lastUpdate,
    endpoints,
    store,
    sources,
    nodes: cluster?.nodes ?? [],
    redis: cluster?.redis ?? null,
    history: { ...parts.history, state: historyState },
    stream: { state: rateState, open: parts.openStreams },
  };
}

export function renderStatus(status: ServiceStatus, time: ZoneTime, generatedAt: string) {
  const at = (ms: number | null) => (ms === null ? null : time.format(ms));
  const payload = {
    service: status.service,
    last_check: at(status.last_check),
    last_update: at(status.last_update),
    endpoints: status.endpoints,
    store: { state: status.store.reachable ? 'active' : 'down', since: time.format(status.store.since), error: status.store.error },
    sources: status.sources.map((s) => ({
      name: s.name,
      type: s.type,
      state: s.state,
      last_update: at(s.last_update),
      age_seconds: s.age_seconds,
      age_text: s.age_seconds === null ? 'never' : formatAge(s.age_seconds),
      error: s.error,
      unknown_keys: s.unknown_keys,
      format: s.format,
      mapped: s.mapped,
      dropped: s.dropped,
      dropped_reasons: s.dropped_reasons.map((drop) => ({ reason: drop.reason, description: DROP_REASON_TEXT[drop.reason], count: drop.count, source_keys: drop.source_keys })),
      ...(s.derived ? { derived: s.derived } : {}),
    })),
    nodes: status.nodes.map((node) => ({ id: node.id, role: node.role, leader: node.leader, version: node.version, last_seen: time.format(node.last_seen) })),
    redis: status.redis === null ? null : { state: status.redis },
    history: {
      state: status.history.state,
      minute_days: status.history.minuteDays,
      last_written: at(status.history.lastWritten),
      recording: status.history.recording,
      pending_candles: status.history.pending,
    },
    stream: { state: status.stream.state, open_streams: status.stream.open },
  };
  const inner = JSON.stringify(payload).slice(1);
  return { body: `${okHead(generatedAt)},${inner}`, etag: etagOf('s', fnv1a(inner)) };
}

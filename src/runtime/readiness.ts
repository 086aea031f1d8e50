import type { RefreshTiers } from '../live/refresh-tiers.js';
import type { Backends } from '../roles/backends.js';
import type { SourceHealth } from '../sources/health.js';

/** What a node's readiness depends on beyond the store: how its snapshots reach it, and what the sources gave. */
export interface ReadinessParts {
  backends: Pick<Backends, 'role' | 'link' | 'lease' | 'registry'>;
  snapshots: RefreshTiers;
  sourceHealth(now: number): SourceHealth[];
}

/**
 * What the node waits for before it can serve prices, in words an operator can
 * act on (`/readyz` and the start line say it); null when it holds rates. A node
 * gets its snapshots from the ingest leader through Redis, so an unreachable
 * Redis is named first, with where and why; then a missing leader; then
 * sources that have given nothing yet.
 */
export function waitingFor(parts: ReadinessParts, now: number): string | null {
  const { link, lease, registry, role } = parts.backends;
  if (parts.snapshots.held) {
    const counts = parts.snapshots.latest().counts;
    if (counts.ok + counts.stale > 0) return null;
    const sources = parts.sourceHealth(now).filter((source) => source.state !== 'active');
    const named = sources.map((source) => `${source.name} ${source.state}`).join(', ');
    return `no source has given a value yet${named ? ` (${named}; /v1/status says why)` : ''}`;
  }
  if (link && link.state !== 'ready') return `waiting for Redis at ${link.address} (${link.problem ?? 'connecting'})`;
  if (lease?.isLeader) return 'reading the sources for the first snapshot';
  if (registry.nodes().some((node) => node.leader)) return "waiting for the ingest leader's first snapshot";
  return role === 'api'
    ? 'waiting for an ingest leader: no node holds the lease (an api node never ingests; start an all or ingest node)'
    : 'waiting for an ingest leader: no node holds the lease yet (this node takes it within seconds)';
}

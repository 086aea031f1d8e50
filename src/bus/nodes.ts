/** One live process, as `/v1/status` lists it (docs/api.md#status). */
export interface NodeInfo {
  id: string;
  role: string;
  leader: boolean;
  /** The snapshot version the node serves; null before its first. */
  version: number | null;
  /** Epoch ms of its last heartbeat. */
  last_seen: number;
}

/** What a node says of itself at each heartbeat. */
export type NodeSelf = () => Pick<NodeInfo, 'role' | 'leader' | 'version'>;

/**
 * The live processes: each writes a heartbeat every second; one missing for
 * 5 s is gone. The count sizes each node's share of a rate limit.
 */
export interface NodeRegistry {
  readonly id: string;
  /** Live nodes by id, as of the last heartbeat (the last known list while Redis is unreachable). */
  nodes(): readonly NodeInfo[];
  /** How many nodes are live; at least 1 (this one). */
  count(): number;
  readonly healthy: boolean;
  /** Write the first heartbeat, then one a second. Never rejects. */
  start(): Promise<void>;
  /** Stop and leave the list at once. */
  close(): Promise<void>;
}

/** The embedded twin: the only node is this one. */
export class SoleNode implements NodeRegistry {
  readonly healthy = true;

  constructor(
    readonly id: string,
    private readonly self: NodeSelf,
    private readonly now: () => number = Date.now,
  ) {}

  nodes(): readonly NodeInfo[] {
    return [{ id: this.id, ...this.self(), last_seen: this.now() }];
  }

  count(): number {
    return 1;
  }

  async start(): Promise<void> {}

  async close(): Promise<void> {}
}

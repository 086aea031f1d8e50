import type { Logger } from '../log.js';
import type { RedisLink } from './link.js';
import type { NodeInfo, NodeRegistry, NodeSelf } from './nodes.js';
import { LuaScript } from './script.js';

export const HEARTBEAT_EVERY_MS = 1000;
export const NODE_TTL_MS = 5000;

/**
 * One heartbeat: stamp this node with Redis's own clock (so nodes with skewed
 * clocks still agree who is live), drop nodes silent past the TTL, and return
 * the live ones as flat triples [id, last seen ms, description].
 */
const HEARTBEAT = new LuaScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local horizon = now - tonumber(ARGV[3])
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
local gone = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. string.format('%d', horizon))
for _, id in ipairs(gone) do redis.call('HDEL', KEYS[2], id) end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. string.format('%d', horizon))
redis.call('PEXPIRE', KEYS[1], 60000)
redis.call('PEXPIRE', KEYS[2], 60000)
local live = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
local out = {}
for i = 1, #live, 2 do
  out[#out + 1] = live[i]
  out[#out + 1] = live[i + 1]
  out[#out + 1] = redis.call('HGET', KEYS[2], live[i]) or '{}'
end
return out
`);

const LEAVE = new LuaScript(`
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
return 1
`);

/** The node registry in Redis: a sorted set of last-seen times and a hash of descriptions. */
export class RedisNodeRegistry implements NodeRegistry {
  private live: NodeInfo[] = [];
  private timer: NodeJS.Timeout | null = null;
  private busy = false;
  private closed = false;
  private failing = false;

  constructor(
    private readonly link: RedisLink,
    readonly id: string,
    private readonly self: NodeSelf,
    private readonly logger: Logger,
  ) {}

  get healthy(): boolean {
    return this.link.state === 'ready' && !this.failing;
  }

  nodes(): readonly NodeInfo[] {
    return this.live;
  }

  count(): number {
    return Math.max(1, this.live.length);
  }

  async start(): Promise<void> {
    if (this.timer || this.closed) return;
    this.timer = setInterval(() => void this.beat(), HEARTBEAT_EVERY_MS);
    this.timer.unref();
    await this.link.settled();
    await this.beat();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await LEAVE.run(this.link.client, this.keys(), [this.id]).catch(() => {});
  }

  /** Write this node's heartbeat and read the live list. */
  async beat(): Promise<void> {
    if (this.busy || this.closed) return;
    this.busy = true;
    try {
      const reply = (await HEARTBEAT.run(this.link.client, this.keys(), [this.id, JSON.stringify(this.self()), NODE_TTL_MS])) as string[];
      const live: NodeInfo[] = [];
      for (let i = 0; i + 2 < reply.length; i += 3) live.push(describe(reply[i]!, Number(reply[i + 1]), reply[i + 2]!));
      live.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      this.live = live;
      this.failing = false;
    } catch (error) {
      if (!this.failing) this.logger.warn({ part: 'nodes', err: (error as Error).message }, 'heartbeat failed; keeping the last known node list');
      this.failing = true;
    } finally {
      this.busy = false;
    }
  }

  private keys(): string[] {
    return [this.link.key('nodes:seen'), this.link.key('nodes:info')];
  }
}

function describe(id: string, lastSeen: number, text: string): NodeInfo {
  let info: Partial<NodeInfo> = {};
  try {
    info = JSON.parse(text) as Partial<NodeInfo>;
  } catch {
    // A description we cannot read still counts the node as live.
  }
  return { id, role: String(info.role ?? 'unknown'), leader: info.leader === true, version: typeof info.version === 'number' ? info.version : null, last_seen: lastSeen };
}

import type { Redis } from 'ioredis';
import { LuaScript } from '../../bus/script.js';

/**
 * One atomic exchange between a node and a key's shared window counters.
 *
 * First, what this node holds of each window is made sure of. Beside each
 * counter a hash records, per node, what that node has taken of the window
 * (grants and charges, less what it handed back), and the node says what it
 * knows it holds. A hash that records less, or nothing, means Redis lost the
 * window (a restart without persistence, an eviction): the node puts its
 * part back into the counter, so a fresh Redis does not hand the window out
 * a second time. Each node restores only its own part, so nothing is counted
 * twice, and only when it is missing, so quota handed back stays free.
 *
 * Then the node's owed deltas are applied unconditionally: requests it
 * admitted on credit or while Redis was away (positive), and quota it hands
 * back unused (negative). Then it takes up to `want` more from what both
 * windows have left. Counters count quota handed out, so a node's grant is
 * counted as spent until it returns what it did not use.
 *
 * KEYS: minute counter, minute holders[, day counter, day holders]
 * ARGV: minute limit, day limit, minute delta, day delta, want, minute ttl ms, day ttl ms,
 *       node id, what the node holds of the minute, what it holds of the day
 * Returns {granted, minute counter, day counter (0 without a day window), restored}.
 */
const TAKE = new LuaScript(`
local node = ARGV[8]
local restored = 0
local function apply(counter, holders, held, delta, ttl)
  local recorded = tonumber(redis.call('HGET', holders, node) or '0')
  local missing = math.max(0, held - recorded)
  restored = restored + missing
  local count = redis.call('INCRBY', counter, delta + missing)
  if count < 0 then
    redis.call('SET', counter, 0)
    count = 0
  end
  redis.call('HSET', holders, node, math.max(0, math.max(recorded, held) + delta))
  redis.call('PEXPIRE', counter, ttl)
  redis.call('PEXPIRE', holders, ttl)
  return count
end
local minute = apply(KEYS[1], KEYS[2], tonumber(ARGV[9]), tonumber(ARGV[3]), ARGV[6])
local free = tonumber(ARGV[1]) - minute
local day = 0
if #KEYS > 2 then
  day = apply(KEYS[3], KEYS[4], tonumber(ARGV[10]), tonumber(ARGV[4]), ARGV[7])
  free = math.min(free, tonumber(ARGV[2]) - day)
end
local granted = math.max(0, math.min(tonumber(ARGV[5]), free))
if granted > 0 then
  minute = redis.call('INCRBY', KEYS[1], granted)
  redis.call('HINCRBY', KEYS[2], node, granted)
  if #KEYS > 2 then
    day = redis.call('INCRBY', KEYS[3], granted)
    redis.call('HINCRBY', KEYS[4], node, granted)
  end
end
return {granted, minute, day, restored}
`);

export interface TakeRequest {
  minuteKey: string;
  /** Null when the key has no day limit. */
  dayKey: string | null;
  /** This node's name in the windows' holder hashes. */
  node: string;
  /** What this node has taken of each window, as Redis last confirmed it (the day's only when `dayKey` is set). */
  minuteHeld: number;
  dayHeld: number;
  perMinute: number;
  perDay: number | null;
  minuteDelta: number;
  dayDelta: number;
  want: number;
  minuteTtlMs: number;
  dayTtlMs: number;
}

export interface TakeReply {
  granted: number;
  minuteCount: number;
  dayCount: number;
  /** What this node put back because Redis had lost it (both windows together); 0 normally. */
  restored: number;
}

/** The hash beside a window counter that records what each node took of it. */
const holdersOf = (counter: string) => `${counter}:holders`;

export async function takeQuota(client: Redis, request: TakeRequest): Promise<TakeReply> {
  const keys = [request.minuteKey, holdersOf(request.minuteKey)];
  if (request.dayKey !== null) keys.push(request.dayKey, holdersOf(request.dayKey));
  const reply = (await TAKE.run(client, keys, [
    request.perMinute,
    request.perDay ?? 0,
    request.minuteDelta,
    request.dayDelta,
    request.want,
    Math.max(1000, Math.ceil(request.minuteTtlMs)),
    Math.max(1000, Math.ceil(request.dayTtlMs)),
    request.node,
    request.minuteHeld,
    request.dayHeld,
  ])) as [number, number, number, number];
  return { granted: reply[0], minuteCount: reply[1], dayCount: reply[2], restored: reply[3] };
}

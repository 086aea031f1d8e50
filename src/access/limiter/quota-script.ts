import type { Redis } from 'ioredis';
import { LuaScript } from '../../bus/script.js';

/**
 * One atomic exchange between a node and a key's shared window counters.
 * First the node's owed deltas are applied unconditionally: requests it
 * admitted on credit or while Redis was away (positive), and quota it hands
 * back unused (negative). Then it takes up to `want` more from what both
 * windows have left. Counters count quota handed out, so a node's grant is
 * counted as spent until it returns what it did not use.
 *
 * KEYS: minute counter[, day counter]
 * ARGV: minute limit, day limit, minute delta, day delta, want, minute ttl ms, day ttl ms
 * Returns {granted, minute counter, day counter (0 without a day window)}.
 */
const TAKE = new LuaScript(`
local function apply(key, delta, ttl)
  local count = redis.call('INCRBY', key, delta)
  if count < 0 then
    redis.call('SET', key, 0)
    count = 0
  end
  redis.call('PEXPIRE', key, ttl)
  return count
end
local minute = apply(KEYS[1], ARGV[3], ARGV[6])
local free = tonumber(ARGV[1]) - minute
local day = 0
if #KEYS > 1 then
  day = apply(KEYS[2], ARGV[4], ARGV[7])
  free = math.min(free, tonumber(ARGV[2]) - day)
end
local granted = math.max(0, math.min(tonumber(ARGV[5]), free))
if granted > 0 then
  minute = redis.call('INCRBY', KEYS[1], granted)
  if #KEYS > 1 then day = redis.call('INCRBY', KEYS[2], granted) end
end
return {granted, minute, day}
`);

export interface TakeRequest {
  minuteKey: string;
  /** Null when the key has no day limit. */
  dayKey: string | null;
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
}

export async function takeQuota(client: Redis, request: TakeRequest): Promise<TakeReply> {
  const keys = request.dayKey === null ? [request.minuteKey] : [request.minuteKey, request.dayKey];
  const reply = (await TAKE.run(client, keys, [
    request.perMinute,
    request.perDay ?? 0,
    request.minuteDelta,
    request.dayDelta,
    request.want,
    Math.max(1000, Math.ceil(request.minuteTtlMs)),
    Math.max(1000, Math.ceil(request.dayTtlMs)),
  ])) as [number, number, number];
  return { granted: reply[0], minuteCount: reply[1], dayCount: reply[2] };
}

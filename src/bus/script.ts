import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * A Lua script run by its SHA, loaded again whenever the server has forgotten
 * it (after a restart). ioredis's `defineCommand` does the same per connection
 * but only as an untyped method; this keeps the call typed and shared.
 */
export class LuaScript {
  private readonly sha: string;

  constructor(private readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  async run(client: Redis, keys: string[], args: (string | number)[]): Promise<unknown> {
    try {
      return await client.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return client.eval(this.source, keys.length, ...keys, ...args);
    }
  }
}

/**
 * Lua setting local `name` to the next value of the counter at `key`, above
 * the floor in `floorArg` (the highest value the caller has seen): a counter
 * that only grows, also past a Redis restart that lost it. The lease's epochs
 * and the bus's snapshot versions are both counted so.
 */
export function growingCounter(name: string, key: string, floorArg: string): string {
  return `local ${name} = redis.call('INCR', ${key})
local floor = tonumber(${floorArg})
if ${name} <= floor then
  ${name} = floor + 1
  redis.call('SET', ${key}, ${name})
end`;
}

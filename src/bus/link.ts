import { createRequire } from 'node:module';
import type { Redis, RedisOptions } from 'ioredis';
import type { Logger } from '../log.js';

export const DEFAULT_PREFIX = 'nerkh:';

/** The Redis client library, loaded with the first connection: a process without Redis (one node, every admin command) never pays its start-up. */
const redisClient = () => (createRequire(import.meta.url)('ioredis') as typeof import('ioredis')).Redis;

/** `ready`: commands go through; `down`: unreachable, reconnecting by itself; `closed`: closed on purpose. */
export type LinkState = 'connecting' | 'ready' | 'down' | 'closed';

export interface LinkOptions {
  url: string;
  /** Namespaces every key and channel (`NERKH_REDIS_PREFIX`). */
  prefix?: string;
  logger: Logger;
  /** Longest wait for one command before it fails (and the caller falls back). */
  commandTimeoutMs?: number;
}

type MessageListener = (message: string) => void;

/**
 * One process's connection to Redis: a command connection and, once a part
 * subscribes, a subscriber connection. Neither queues commands while Redis is
 * unreachable: a command then fails at once and each part falls back to what
 * it knows, so nothing waits on a dead server and nothing piles up. Both
 * reconnect by themselves (at most a second apart); connection errors are
 * logged once per outage, never thrown.
 */
export class RedisLink {
  readonly prefix: string;
  readonly client: Redis;
  private subscriber: Redis | null = null;
  private readonly channels = new Map<string, { listeners: Set<MessageListener>; onReady: Set<() => unknown> }>();
  private readonly stateListeners = new Set<(state: LinkState) => void>();
  private current: LinkState = 'connecting';
  private readonly logger: Logger;
  private readonly options: RedisOptions;
  private readonly url: string;
  /** Where Redis is, for messages: host and port, never the password. */
  readonly address: string;
  private lastProblem: string | null = null;

  constructor(options: LinkOptions) {
    this.prefix = options.prefix ?? DEFAULT_PREFIX;
    this.logger = options.logger;
    this.url = options.url;
    this.address = redisAddress(options.url);
    this.options = {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      autoResubscribe: false,
      commandTimeout: options.commandTimeoutMs ?? 1000,
      connectTimeout: 2000,
      retryStrategy: (attempt) => Math.min(100 * attempt, 1000),
      enableAutoPipelining: true,
    };
    this.client = this.connect('commands', (state) => this.setState(state));
  }

  get state(): LinkState {
    return this.current;
  }

  /** Why the last connection attempt failed (`connection refused`, `authentication failed`…); null once connected. */
  get problem(): string | null {
    return this.current === 'ready' ? null : this.lastProblem;
  }

  /** What a status page shows: Redis answers commands and every subscription is live. */
  get healthy(): boolean {
    return this.current === 'ready' && (this.subscriber === null || this.subscriber.status === 'ready');
  }

  /** A key or channel name under this process's prefix. */
  key(name: string): string {
    return this.prefix + name;
  }

  /**
   * Wait (at most `timeoutMs`) for the command connection to be ready: for a
   * short-lived process, such as the admin command, that connects to send one thing.
   */
  whenReady(timeoutMs: number): Promise<boolean> {
    if (this.current === 'ready') return Promise.resolve(true);
    if (this.current === 'closed') return Promise.resolve(false);
    return new Promise((resolve) => {
      const timer = setTimeout(() => finish(false), timeoutMs);
      const stop = this.onState((state) => {
        if (state === 'ready') finish(true);
        else if (state === 'closed') finish(false);
      });
      function finish(ready: boolean) {
        clearTimeout(timer);
        stop();
        resolve(ready);
      }
    });
  }

  /** Resolves once the first connection attempt has ended, either way (a start waits for this, not for Redis). */
  settled(): Promise<void> {
    if (this.current !== 'connecting') return Promise.resolve();
    return new Promise((resolve) => {
      const stop = this.onState(() => {
        stop();
        resolve();
      });
    });
  }

  /** Be told when the command connection comes up or goes down. */
  onState(listener: (state: LinkState) => void): () => void {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }

  /**
   * Listen on a channel (named without the prefix). `onReady` runs each time the
   * subscription is confirmed — at first and after every reconnect — so a part
   * can read what it missed while the subscription was down.
   */
  subscribe(channel: string, listener: MessageListener, onReady?: () => unknown): () => void {
    const name = this.key(channel);
    let entry = this.channels.get(name);
    const fresh = !entry;
    if (!entry) this.channels.set(name, (entry = { listeners: new Set(), onReady: new Set() }));
    entry.listeners.add(listener);
    if (onReady) entry.onReady.add(onReady);
    const subscriber = this.ensureSubscriber();
    if (subscriber.status === 'ready') {
      if (fresh) this.subscribeAll([name]);
      else if (onReady) onReady();
    }
    return () => {
      entry.listeners.delete(listener);
      if (onReady) entry.onReady.delete(onReady);
      if (entry.listeners.size === 0) {
        this.channels.delete(name);
        if (this.subscriber?.status === 'ready') this.subscriber.unsubscribe(name).catch(() => {});
      }
    };
  }

  /**
   * `subscribe`, resolving once the subscription is confirmed and its first
   * `onReady` has finished, or at once when Redis is found unreachable (the
   * subscription then comes up with the connection). Never rejects.
   */
  listen(channel: string, listener: MessageListener, onReady: () => Promise<void> | void = () => {}): Promise<() => void> {
    return new Promise((resolve) => {
      let unsubscribe: () => void = () => {};
      let settled = false;
      const stop = this.onState((state) => {
        if (state === 'down' || state === 'closed') settle();
      });
      function settle() {
        if (settled) return;
        settled = true;
        stop();
        resolve(unsubscribe);
      }
      unsubscribe = this.subscribe(channel, listener, () => {
        Promise.resolve()
          .then(onReady)
          .catch(() => {})
          .finally(settle);
      });
      if (this.current === 'down' || this.current === 'closed') settle();
    });
  }

  async close(): Promise<void> {
    if (this.current === 'closed') return;
    this.setState('closed');
    await Promise.all([quit(this.client), this.subscriber ? quit(this.subscriber) : null]);
  }

  private ensureSubscriber(): Redis {
    if (!this.subscriber) {
      this.subscriber = this.connect('subscriber', (state) => {
        if (state === 'ready') this.subscribeAll([...this.channels.keys()]);
      });
      this.subscriber.on('message', (channel: string, message: string) => {
        for (const listener of this.channels.get(channel)?.listeners ?? []) listener(message);
      });
    }
    return this.subscriber;
  }

  private subscribeAll(names: string[]): void {
    if (names.length === 0 || !this.subscriber) return;
    this.subscriber.subscribe(...names).then(
      () => {
        for (const name of names) for (const onReady of this.channels.get(name)?.onReady ?? []) onReady();
      },
      // The connection dropped meanwhile; its next 'ready' subscribes again.
      () => {},
    );
  }

  private connect(role: string, onState: (state: LinkState) => void): Redis {
    const client = new (redisClient())(this.url, this.options);
    let reported = false;
    client.on('ready', () => {
      if (reported) this.logger.info({ part: 'redis', role }, 'redis reachable again');
      reported = false;
      onState('ready');
    });
    client.on('close', () => {
      if (this.current !== 'closed') onState('down');
    });
    client.on('error', (error: Error) => {
      if (role === 'commands') this.lastProblem = describeRedisError(error);
      if (reported || this.current === 'closed') return;
      reported = true;
      this.logger.warn({ part: 'redis', role, err: error.message }, 'redis unreachable; falling back and retrying');
    });
    return client;
  }

  private setState(state: LinkState): void {
    if (state === this.current || this.current === 'closed') return;
    this.current = state;
    for (const listener of this.stateListeners) listener(state);
  }
}

async function quit(client: Redis): Promise<void> {
  try {
    if (client.status === 'ready') await client.quit();
    else client.disconnect();
  } catch {
    client.disconnect();
  }
}

/** `host:port` of a Redis URL (6379 unless given), never its user or password; a socket path as it is. */
export function redisAddress(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.protocol === 'redis:' || parsed.protocol === 'rediss:') return `${parsed.hostname || '127.0.0.1'}:${parsed.port || 6379}`;
  } catch {
    // Not a URL: ioredis also takes a socket path.
  }
  return url.includes('@') ? url.slice(url.lastIndexOf('@') + 1) : url;
}

/** A connection failure in a few words, as an operator would search for it. */
function describeRedisError(error: Error & { code?: string }): string {
  switch (error.code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ETIMEDOUT':
      return 'connection timed out';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host not found';
    case 'ECONNRESET':
      return 'connection reset';
  }
  if (/NOAUTH|WRONGPASS|invalid password|invalid username-password/i.test(error.message)) return 'authentication failed';
  return error.message.slice(0, 120);
}

import type { RedisLink } from './link.js';

/**
 * One channel of the link, listened to from `start` until `stop`: what the
 * snapshot bus and the change notices both do. A second start is a no-op,
 * also while the first is still subscribing.
 */
export class ChannelListener {
  private unsubscribe: (() => void) | null = null;

  constructor(
    private readonly link: RedisLink,
    private readonly channel: string,
  ) {}

  /** Resolves once subscribed (and `onReady` has run), or at once when Redis is unreachable; see `RedisLink.listen`. */
  async start(onMessage: (message: string) => void, onReady?: () => Promise<void> | void): Promise<void> {
    if (this.unsubscribe) return;
    this.unsubscribe = () => {};
    this.unsubscribe = await this.link.listen(this.channel, onMessage, onReady);
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
  }
}

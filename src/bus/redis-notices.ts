import type { Logger } from '../log.js';
import { ChannelListener } from './channel-listener.js';
import type { RedisLink } from './link.js';
import { NOTICE_KINDS, type NoticeKind, type Notices } from './notices.js';

const CHANNEL = 'notices';
/** A process that connects only to announce (the admin command) waits this long for Redis. */
const CONNECT_WAIT_MS = 1000;

/** Change notices over a Redis channel; the message is the kind's name. */
export class RedisNotices implements Notices {
  private readonly listeners = new Set<(kind: NoticeKind) => void>();
  private readonly channel: ChannelListener;

  constructor(
    private readonly link: RedisLink,
    private readonly logger: Logger,
  ) {
    this.channel = new ChannelListener(link, CHANNEL);
  }

  get healthy(): boolean {
    return this.link.healthy;
  }

  /** Listen for notices; resolves once subscribed, or at once when Redis is unreachable. */
  async start(): Promise<void> {
    await this.channel.start((message) => this.receive(message));
  }

  async notify(kind: NoticeKind): Promise<void> {
    try {
      if (!(await this.link.whenReady(CONNECT_WAIT_MS))) throw new Error('Redis unreachable');
      await this.link.client.publish(this.link.key(CHANNEL), kind);
    } catch (error) {
      this.logger.warn({ part: 'notices', kind, err: (error as Error).message }, 'change notice not sent; other nodes see the change at their next store poll');
    }
  }

  onNotice(listener: (kind: NoticeKind) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.channel.stop();
    this.listeners.clear();
  }

  private receive(message: string): void {
    if (!(NOTICE_KINDS as readonly string[]).includes(message)) return;
    for (const listener of this.listeners) {
      try {
        listener(message as NoticeKind);
      } catch (error) {
        this.logger.error({ part: 'notices', err: error }, 'a notice listener failed');
      }
    }
  }
}

/**
 * A webhook receiver on 127.0.0.1 for the tests: every request is kept with
 * its headers and raw body and verified with the Standard Webhooks library
 * against the secret of the path it came to (an unverifiable one fails the
 * test that reads it). Each path answers what the test sets (200 unless told).
 */
import { createServer, type Server } from 'node:http';
import { Webhook } from 'standardwebhooks';

export interface Received {
  path: string;
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  /** The parsed body, when the signature verified; null otherwise. */
  event: { type: string; timestamp: string; data: Record<string, unknown> } | null;
  verifyError: string | null;
  /** The status this request was answered with. */
  answered: number;
  at: number;
}

export class WebhookReceiver {
  readonly received: Received[] = [];
  private readonly secrets = new Map<string, string>();
  /** Per path: the statuses to answer next, in order; 200 once they run out. */
  private readonly scripts = new Map<string, number[]>();
  /** Per path: a status answered every time while set. */
  private readonly fixed = new Map<string, number>();
  private server: Server | null = null;
  port = 0;

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const path = request.url ?? '/';
        const body = Buffer.concat(chunks).toString('utf8');
        const headers = { 'webhook-id': String(request.headers['webhook-id'] ?? ''), 'webhook-timestamp': String(request.headers['webhook-timestamp'] ?? ''), 'webhook-signature': String(request.headers['webhook-signature'] ?? '') };
        let event: Received['event'] = null;
        let verifyError: string | null = null;
        const secret = this.secrets.get(path);
        try {
          if (!secret) throw new Error(`no secret for ${path}`);
          event = new Webhook(secret).verify(body, headers) as Received['event'];
        } catch (error) {
          verifyError = (error as Error).message;
        }
        const script = this.scripts.get(path);
        const answered = this.fixed.get(path) ?? script?.shift() ?? 200;
        this.received.push({ path, id: headers['webhook-id'], timestamp: headers['webhook-timestamp'], signature: headers['webhook-signature'], body, event, verifyError, answered, at: Date.now() });
        response.writeHead(answered, { 'content-type': 'text/plain' }).end('ok');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** The secret deliveries to `path` are signed with (as `nerkh webhooks add` printed it). */
  expect(path: string, secret: string): void {
    this.secrets.set(path, secret);
  }

  /** Answer these statuses to the next requests on `path`, then 200. */
  script(path: string, statuses: number[]): void {
    this.scripts.set(path, [...statuses]);
  }

  /** Answer `status` to every request on `path` until `fixedStatus(path, null)`. */
  fixedStatus(path: string, status: number | null): void {
    if (status === null) this.fixed.delete(path);
    else this.fixed.set(path, status);
  }

  on(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

import type { FastifyReply, FastifyRequest } from 'fastify';
import { compress, type Encoding } from '../render/compression.js';
import { acceptedEncoding } from './encoding.js';

/**
 * A JSON document that never changes while the process runs (the API
 * description): serialised once, and compressed once per coding on the first
 * request that asks for it.
 */
export class PreparedDocument {
  private body: Buffer | null = null;
  private readonly forms = new Map<Encoding, Buffer>();

  constructor(private readonly build: () => unknown) {}

  send(request: FastifyRequest, reply: FastifyReply): FastifyReply {
    this.body ??= Buffer.from(JSON.stringify(this.build()));
    const encoding = acceptedEncoding(request.headers['accept-encoding']);
    reply.header('cache-control', 'no-cache').header('vary', 'Accept-Encoding').header('content-type', 'application/json; charset=utf-8');
    if (encoding === null) return reply.send(this.body);
    let form = this.forms.get(encoding);
    if (!form) {
      form = compress(this.body, encoding);
      this.forms.set(encoding, form);
    }
    return reply.header('content-encoding', encoding).send(form);
  }
}

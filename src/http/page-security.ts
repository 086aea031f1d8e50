import type { FastifyInstance } from 'fastify';
import { DOCS_STYLE_HASHES, pageHeaders } from '../web/security-headers.js';

/**
 * Every HTML answer gets the pages' security headers: the
 * content policy (no inline script or style; `frame-ancestors` as the
 * operator set it), `nosniff` and `no-referrer`. Decided by the answer's type
 * rather than per route, so /docs (served by the swagger-ui plugin) and any
 * page added later are covered too. Scripts, style sheets and fonts get `nosniff`,
 * which makes the browser run them only under their declared type. JSON
 * answers are left as they are (the raw detail path writes the same bytes
 * without this hook).
 */
export function installPageSecurity(app: FastifyInstance, frameAncestors: string): void {
  const page = Object.entries(pageHeaders(frameAncestors));
  // /docs alone admits the one inline style swagger-ui draws (by its hash; see docs-brand.ts).
  const docs = Object.entries(pageHeaders(frameAncestors, DOCS_STYLE_HASHES));
  app.addHook('onSend', (request, reply, payload, done) => {
    const type = reply.getHeader('content-type');
    if (typeof type === 'string') {
      if (type.startsWith('text/html')) for (const [name, value] of request.url.startsWith('/docs') ? docs : page) reply.header(name, value);
      else if (type.startsWith('text/css') || type.includes('javascript') || type.startsWith('font/')) reply.header('x-content-type-options', 'nosniff');
    }
    done(null, payload);
  });
}

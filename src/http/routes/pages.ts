import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { HOME_PAGE } from '../../web/home-page.js';
import { NoQuery } from '../schemas.js';

/** The public pages for people (no key). Hidden from the API document: they are not part of the API. */
export function pageRoutes(): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/', { schema: { hide: true, querystring: NoQuery } }, async (_request, reply) =>
      reply.header('cache-control', 'public, max-age=300').header('content-type', 'text/html; charset=utf-8').send(HOME_PAGE),
    );
  };
}

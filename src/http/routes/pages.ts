import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Type } from '@sinclair/typebox';
import { ACCOUNT_PAGE, ACCOUNT_SCRIPT } from '../../web/account-page.js';
import { BOARD_PAGE, BOARD_SCRIPT } from '../../web/board-page.js';
import { LOGO_SVG } from '../../web/docs-brand.js';
import { HOME_PAGE } from '../../web/home-page.js';
import { NoQuery } from '../schemas.js';

/** uPlot's files, read once from the installed package: the page makes no request outside this server. */
const uplotFile = (name: string) => readFileSync(createRequire(import.meta.url).resolve(`uplot/dist/${name}`));

/** What /board takes from its address: the script reads both, then drops the key from the address bar. */
const BoardQuery = Type.Object(
  {
    api_key: Type.Optional(Type.String({ maxLength: 200 })),
    keys: Type.Optional(Type.String({ maxLength: 6_600 })),
  },
  { additionalProperties: false },
);

/** The public pages for people (no key). Hidden from the API document: they are not part of the API. */
export function pageRoutes(): FastifyPluginAsyncTypebox {
  return async (app) => {
    const uplotScript = uplotFile('uPlot.iife.min.js');
    const uplotStyle = uplotFile('uPlot.min.css');
    const page = (path: string, type: string, body: string | Buffer, cacheControl = 'public, max-age=300') =>
      app.get(path, { schema: { hide: true, querystring: NoQuery } }, async (_request, reply) =>
        reply.header('cache-control', cacheControl).header('content-type', type).send(body),
      );
    page('/', 'text/html; charset=utf-8', HOME_PAGE);
    page('/account', 'text/html; charset=utf-8', ACCOUNT_PAGE);
    page('/account/account.js', 'text/javascript; charset=utf-8', ACCOUNT_SCRIPT);
    // The live board's address may hold a key: never stored by a cache, never sent on as a referrer.
    app.get('/board', { schema: { hide: true, querystring: BoardQuery } }, async (_request, reply) =>
      reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').header('content-type', 'text/html; charset=utf-8').send(BOARD_PAGE),
    );
    page('/board/board.js', 'text/javascript; charset=utf-8', BOARD_SCRIPT);
    page('/favicon.ico', 'image/svg+xml', LOGO_SVG, 'public, max-age=86400');
    page('/account/uplot.js', 'text/javascript; charset=utf-8', uplotScript, 'public, max-age=86400');
    page('/account/uplot.css', 'text/css; charset=utf-8', uplotStyle, 'public, max-age=86400');
  };
}

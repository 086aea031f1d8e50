import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { ACCOUNT_PAGE, ACCOUNT_SCRIPT, ACCOUNT_STYLE } from '../../web/account-page.js';
import { BOARD_PAGE, BOARD_SCRIPT, BOARD_STYLE } from '../../web/board-page.js';
import { LOGO_SVG } from '../../web/docs-brand.js';
import { HOME_PAGE, HOME_STYLE } from '../../web/home-page.js';
import { FONT_CACHE_CONTROL, loadPageFont } from '../../web/page-font.js';
import { STATUS_STYLE } from '../../web/status-page.js';
import { NoQuery } from '../schemas.js';

/** uPlot's files, read once from the installed package: the page makes no request outside this server. */
const uplotFile = (name: string) => readFileSync(createRequire(import.meta.url).resolve(`uplot/dist/${name}`));

/**
 * The public pages for people (no key). Hidden from the API document: they
 * are not part of the API. Every page's script and style sheet is a file of
 * its own (the pages' policy runs nothing inline); the security headers are
 * added to every HTML answer by the app (see web/security-headers.ts).
 * Every style sheet begins with the pages' shared typography: the bundled
 * font (served here, under an address that changes with its content) and the
 * isolation of the English asides (see web/page-font.ts).
 */
export function pageRoutes(): FastifyPluginAsyncTypebox {
  return async (app) => {
    const uplotScript = uplotFile('uPlot.iife.min.js');
    const uplotStyle = uplotFile('uPlot.min.css');
    const font = loadPageFont();
    const css = (style: string) => font.style + style;
    const page = (path: string, type: string, body: string | Buffer, cacheControl = 'public, max-age=300') =>
      app.get(path, { schema: { hide: true, querystring: NoQuery } }, async (_request, reply) =>
        reply.header('cache-control', cacheControl).header('content-type', type).send(body),
      );
    page('/', 'text/html; charset=utf-8', HOME_PAGE);
    page('/home.css', 'text/css; charset=utf-8', css(HOME_STYLE));
    page('/account', 'text/html; charset=utf-8', ACCOUNT_PAGE);
    page('/account/account.js', 'text/javascript; charset=utf-8', ACCOUNT_SCRIPT);
    page('/account/account.css', 'text/css; charset=utf-8', css(ACCOUNT_STYLE));
    // The live board's address may hold a key (?api_key=): never stored by a cache, and served whatever
    // else the address holds, so the page's script always gets to take the key out of the address and
    // the tab's history (a refusal would leave it there). The script keeps only ?keys=.
    app.get('/board', { schema: { hide: true } }, async (_request, reply) => reply.header('cache-control', 'no-store').header('content-type', 'text/html; charset=utf-8').send(BOARD_PAGE));
    page('/board/board.js', 'text/javascript; charset=utf-8', BOARD_SCRIPT);
    page('/board/board.css', 'text/css; charset=utf-8', css(BOARD_STYLE));
    page('/status/status.css', 'text/css; charset=utf-8', css(STATUS_STYLE));
    page(font.path, 'font/woff2', font.body, FONT_CACHE_CONTROL);
    page(font.licencePath, 'text/plain; charset=utf-8', font.licence, 'public, max-age=86400');
    page('/favicon.ico', 'image/svg+xml', LOGO_SVG, 'public, max-age=86400');
    page('/account/uplot.js', 'text/javascript; charset=utf-8', uplotScript, 'public, max-age=86400');
    page('/account/uplot.css', 'text/css; charset=utf-8', uplotStyle, 'public, max-age=86400');
  };
}

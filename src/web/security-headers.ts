/**
 * What every HTML page sends. The pages hold keys (in the tab's
 * sessionStorage), so they run no inline script and no inline style: every
 * script and style sheet is a file from this server, and the policy says so.
 * The one exception is a single style element of swagger-ui's on /docs,
 * admitted by the hash of its exact text (DOCS_STYLE_HASHES).
 * `frame-ancestors` is the one part an operator sets (NERKH_FRAME_ANCESTORS):
 * `'none'` by default; a shop that embeds its board on purpose names itself.
 */
import { createHash } from 'node:crypto';
import { SWAGGER_UI_INLINE_STYLE } from './docs-brand.js';

export const DEFAULT_FRAME_ANCESTORS = "'none'";

/**
 * The policy of every page: this server's scripts, styles, images (and data:
 * images), fetches and streams; nothing else. `styleHashes` admit inline
 * style elements by their exact content, one by one.
 */
export function contentSecurityPolicy(frameAncestors: string, styleHashes: readonly string[] = []): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    ["style-src 'self'", ...styleHashes.map((hash) => `'${hash}'`)].join(' '),
    "img-src 'self' data:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "form-action 'self'",
    "base-uri 'none'",
    `frame-ancestors ${frameAncestors}`,
  ].join('; ');
}

/** The headers of an HTML page, as a flat name → value map (built once per app); `styleHashes` as for the policy. */
export function pageHeaders(frameAncestors: string, styleHashes: readonly string[] = []): Record<string, string> {
  return {
    'content-security-policy': contentSecurityPolicy(frameAncestors, styleHashes),
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
  };
}

/** The hashes /docs admits: only the style element swagger-ui draws inside its own logo (see docs-brand.ts). */
export const DOCS_STYLE_HASHES = [`sha256-${createHash('sha256').update(SWAGGER_UI_INLINE_STYLE).digest('base64')}`];

const SCHEME_SOURCE = /^[a-z][a-z0-9+.-]*:$/i;
/** `[scheme://]host[:port][/path]`, host possibly `*` or `*.`-prefixed (CSP Level 3 host-source). */
const HOST_SOURCE = /^(?:[a-z][a-z0-9+.-]*:\/\/)?(?:\*|(?:\*\.)?[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*)(?::(?:\d{1,5}|\*))?(?:\/[A-Za-z0-9._~!$&*+=:@%/-]*)?$/i;

/**
 * A `frame-ancestors` source list as an operator writes it: `'none'` (alone),
 * `'self'`, schemes (`https:`) and hosts (`https://shop.example`,
 * `*.example.com:8443`), separated by spaces. Anything else (a `;` or `,`
 * that would end the directive, a quote, another keyword) is refused, with
 * the reason; the list comes back with single spaces.
 */
export function parseFrameAncestors(raw: string): string {
  const sources = raw.trim().split(/\s+/);
  for (const source of sources) {
    if (/^(self|none)$/i.test(source)) throw new Error(`write '${source.toLowerCase()}' with its single quotes (bare, it would name a host)`);
    if (source === "'none'") {
      if (sources.length > 1) throw new Error("'none' must stand alone");
    } else if (source !== "'self'" && !SCHEME_SOURCE.test(source) && !HOST_SOURCE.test(source)) {
      throw new Error(`${JSON.stringify(source)} is not a source: expected 'none', 'self', a scheme such as https: or a host such as https://shop.example`);
    }
  }
  return sources.join(' ');
}

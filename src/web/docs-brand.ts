/** The look of /docs: Nerkh's own mark and title in place of the framework's. */

export const LOGO_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="180" height="40" viewBox="0 0 180 40">
<rect width="40" height="40" rx="8" fill="#1f4fa8"/>
<path d="M9 28 L17 18 L23 23 L31 11" stroke="#fff" stroke-width="3.5" fill="none" stroke-linecap="round" stroke-linejoin="round"/>
<text x="50" y="27" font-family="Tahoma, sans-serif" font-size="20" font-weight="700" fill="#fff">Nerkh · نرخ</text>
</svg>`;

/**
 * The one inline style swagger-ui renders: a <style> inside the SVG of its
 * own logo, drawn before the initializer puts ours in its place. /docs admits
 * exactly this text (by its hash) and no other inline style; should an
 * upgrade change it, the browser suite reports the violation.
 */
export const SWAGGER_UI_INLINE_STYLE = '.logo_small_svg__cls-2{fill:#fff}.logo_small_svg__cls-3{fill:#85ea2d}';

export const DOCS_LOGO = { type: 'image/svg+xml', content: LOGO_SVG, href: '/', target: '_self' as const };

export const DOCS_THEME = {
  title: 'Nerkh API reference · مستندات نرخ',
  favicon: [{ filename: 'nerkh.svg', rel: 'icon', type: 'image/svg+xml', sizes: 'any', content: LOGO_SVG }],
  css: [{ filename: 'nerkh.css', content: '.swagger-ui .topbar { background: #1d232b; } .swagger-ui .info .title small { display: none; }' }],
};

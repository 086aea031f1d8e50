/**
 * What the browser suites share: Debian's Chromium through playwright-core
 * (never a downloaded browser; a missing /usr/bin/chromium fails loudly), the
 * screenshot folder (test-artifacts/, ignored by git), and a page that records
 * every console error, page error and request leaving the server under test.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

const CHROMIUM = '/usr/bin/chromium';
export const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));

const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** launch() gives the browser a fresh, temporary profile of its own (it refuses --user-data-dir). */
export async function launchChromium(): Promise<Browser> {
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium)`);
  mkdirSync(ARTIFACTS, { recursive: true });
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS });
}

/**
 * Chromium on the profile in `userDataDir`, as a browser that keeps its profile on disk: closing the
 * context ends the browser, and launching again on the same folder is the same browser restarted.
 */
export function launchChromiumWithProfile(userDataDir: string, width: number, height = 900): Promise<BrowserContext> {
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium)`);
  return chromium.launchPersistentContext(userDataDir, { executablePath: CHROMIUM, args: ARGS, viewport: { width, height } });
}

/**
 * A page `width` wide (and `height` high) whose `problems` collect console errors, page errors,
 * any request outside `base`, and every Content-Security-Policy violation
 * (the `securitypolicyviolation` event, listened for in every document before
 * its own scripts run, so a page that broke its policy fails its test even
 * where the browser would log nothing), and every page answer from `base`
 * that came without the policy.
 */
export async function watchedPage(browser: Browser, base: string, width: number, height = 900): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport: { width, height } });
  const page = await context.newPage();
  const problems: string[] = [];
  await page.exposeFunction('reportPolicyViolation', (text: string) => problems.push(`policy violation: ${text}`));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      const report = (window as unknown as { reportPolicyViolation: (text: string) => void }).reportPolicyViolation;
      report(`${event.effectiveDirective} blocked ${event.blockedURI || 'inline'} in ${event.documentURI} (${event.sourceFile}:${event.lineNumber}) ${event.sample}`);
    });
  });
  page.on('response', (response) => {
    if (response.url().startsWith(base) && response.request().resourceType() === 'document' && !response.headers()['content-security-policy']) {
      problems.push(`a page without Content-Security-Policy: ${response.url()}`);
    }
  });
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('request', (request) => {
    if (!request.url().startsWith(base) && !request.url().startsWith('data:')) problems.push(`outside request: ${request.url()}`);
  });
  return { context, page, problems };
}

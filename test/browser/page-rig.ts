/**
 * What every browser suite starts with: the real service in process,
 * listening on a port of its own, an account on the plan the suite names with
 * a key for it, and Chromium (chromium.ts). `close` ends both.
 */
import type { Browser } from 'playwright-core';
import { launchChromium } from './chromium.js';
import { startHarness, type Harness } from '../support/harness.js';

export interface PageRig {
  harness: Harness;
  browser: Browser;
  /** The server's address. */
  base: string;
  /** The key of the account `username`. */
  key: string;
  close(): Promise<void>;
}

export async function startPageRig(username: string, plan: string): Promise<PageRig> {
  const harness = await startHarness();
  let browser: Browser;
  let base: string;
  let key: string;
  try {
    base = await harness.app.listen({ port: 0, host: '127.0.0.1' });
    ({ key } = await harness.keyFor(username, plan));
    browser = await launchChromium();
  } catch (error) {
    await harness.close();
    throw error;
  }
  return {
    harness,
    browser,
    base,
    key,
    async close() {
      await browser.close();
      await harness.close();
    },
  };
}

/** `times` requests for `path` with `key`, one after another: usage (or errors) for the pages to show. */
export async function spend(rig: PageRig, path: string, times: number): Promise<void> {
  for (let i = 0; i < times; i++) await (await fetch(`${rig.base}${path}`, { headers: { 'x-api-key': rig.key } })).arrayBuffer();
}

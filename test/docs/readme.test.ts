/**
 * The README's first request, run as a newcomer would: a fresh `nerkh serve`
 * on the demo defaults (empty data directory, no config file), the demo key it
 * prints put in KEY, and the README's own curl lines run through bash, with
 * the port the server got in place of 8080 (as the README says to do on
 * another port). Each must answer 200 with prices. Then the README's way to
 * get a key when none is printed, run the same way.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { assertBuilt, cleanEnv, pollUntil, ROOT, startServer, type ServerProcess } from '../e2e/helpers.js';
import { tempDir } from '../support/env.js';
import { codeBlocks } from './markdown.js';
import { bash, runCurl, show, type Outcome } from './shell.js';

/** The address every README command uses. */
const README_BASE = 'http://127.0.0.1:8080';
/** Right after a first start the demo account's 10 s refresh tier may not hold the first values yet. */
const PRICES_WITHIN_MS = 25_000;

const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const blocks = codeBlocks(readme);

/** The first request: the code block right after the two commands, less the line where the user sets KEY. */
const firstRequest = blocks[1]!.text
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line !== '' && !line.startsWith('export KEY='));

/** The README's command for a key when none was printed: the `export KEY=$(…)` line of a later block. */
const issueLine = blocks
  .slice(2)
  .flatMap((block) => block.text.split('\n'))
  .find((line) => /^export KEY=\$\(/.test(line.trim()));

interface Detail {
  success: boolean;
  rates: { key: string; value: unknown; status: string }[];
}

/** 200, JSON, and every rate priced. */
function priced(outcome: Outcome): boolean {
  if (outcome.status !== 200) return false;
  try {
    const body = JSON.parse(outcome.body) as Detail;
    return body.success === true && Array.isArray(body.rates) && body.rates.length > 0 && body.rates.every((rate) => typeof rate.value === 'number');
  } catch {
    return false;
  }
}

describe('README: the first request, against a fresh demo server', () => {
  let server: ServerProcess | null = null;
  const dataDir = tempDir('nerkh-readme-data-');
  // A working folder with no nerkh.config.json: only the embedded demo defaults apply.
  const cwd = tempDir('nerkh-readme-cwd-');
  let key = '';

  before(async () => {
    assertBuilt();
    server = await startServer({ NERKH_DATA_DIR: dataDir.path }, { cwd: cwd.path });
  });

  after(async () => {
    await server?.kill();
    dataDir.cleanup();
    cwd.cleanup();
  });

  it('the README shows curl commands on the default address, with $KEY', () => {
    assert.ok(firstRequest.length >= 2, `the first request block holds ${firstRequest.length} commands:\n${blocks[1]?.text}`);
    for (const line of firstRequest) {
      assert.match(line, /^curl /, `not a curl command: ${line}`);
      assert.ok(line.includes('$KEY'), `does not send $KEY: ${line}`);
      assert.ok(line.includes(README_BASE), `not on ${README_BASE}: ${line}`);
    }
    assert.ok(blocks[1]!.text.includes('export KEY='), 'the first request block sets KEY');
  });

  it('the server prints a demo key on its first start', async () => {
    const { value } = await pollUntil(async () => server!.stdout, (out) => /^\s*nrk_[0-9A-Za-z]{32}\s*$/m.test(out), 10_000, 50, (out) => out);
    key = /^\s*(nrk_[0-9A-Za-z]{32})\s*$/m.exec(value)![1]!;
  });

  it("each of the README's first commands gets 200 JSON with prices", async (t) => {
    assert.ok(key, `no demo key\n${server!.output()}`);
    const env = cleanEnv({ KEY: key });
    for (const line of firstRequest) {
      const command = line.split(README_BASE).join(server!.base);
      const { value, ms } = await pollUntil(() => runCurl(command, env, cwd.path), priced, PRICES_WITHIN_MS, 500, show);
      const body = JSON.parse(value.body) as Detail;
      t.diagnostic(`${line}: ${body.rates.map((rate) => `${rate.key}=${String(rate.value)}`).join(' ')} (after ${ms} ms)`);
    }
  });

  it('the README\'s way to a key when none is printed works, and the key reads prices', async () => {
    assert.ok(issueLine, 'README.md has no `export KEY=$(…)` line after the first request');
    // Run from the repository (where `node bin/nerkh.js` is this package's command), on the server's data directory.
    const env = cleanEnv({ NERKH_DATA_DIR: dataDir.path });
    const run = await bash(`${issueLine.trim()}\nprintf '%s\\n' "$KEY"`, env, ROOT, 60_000);
    const issued = run.stdout.trim().split('\n').pop() ?? '';
    assert.match(issued, /^nrk_[0-9A-Za-z]{32}$/, `the README's command gave no key (exit ${run.code}): ${run.stdout} ${run.stderr}`);
    assert.notEqual(issued, key, 'a new key, not the demo one');
    const command = firstRequest[0]!.split(README_BASE).join(server!.base);
    await pollUntil(() => runCurl(command, cleanEnv({ KEY: issued }), cwd.path), priced, 10_000, 250, show);
  });
});

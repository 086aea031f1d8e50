/**
 * The operator's quick start (docs/quick-starts.md#an-operator-with-their-own-feeds),
 * run as written, from an empty directory to a price on the operator's own
 * plan: its config file written as shown, `nerkh serve` started there with no
 * NERKH_* variable but the port (so the data directory is ./var beside the
 * config), the two commands the start prints run as printed, the catalogue
 * asked for the source keys, the feed written with the page's own shell
 * lines, the prices read with its curl line, and a typo in the feed named on
 * the public status page and the keyed /v1/status.
 */
import assert from 'node:assert/strict';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { assertBuilt, cleanEnv, get, pollUntil, ROOT, startServer, type ServerProcess } from '../e2e/helpers.js';
import { tempDir } from '../support/env.js';
import { codeBlocks, type CodeBlock } from './markdown.js';
import { bash, runCurl, show, type Outcome } from './shell.js';

/** The address every command on the page uses. */
const PAGE_BASE = 'http://127.0.0.1:8080';
/** A plan of one's own refreshes every 10 s: the first prices are there within that, and this is generous. */
const PRICES_WITHIN_MS = 30_000;

const page = readFileSync(join(ROOT, 'docs', 'quick-starts.md'), 'utf8');
const section = page.slice(page.indexOf('## An operator with their own feeds'), page.indexOf('## A deployment'));
const blocks = codeBlocks(section);
const [configBlock, keyBlock, catalogueBlock, feedBlock, pricesBlock] = blocks as [CodeBlock, CodeBlock, CodeBlock, CodeBlock, CodeBlock];
/** The commands of a shell block, one a line, comments dropped. */
const commands = (block: CodeBlock) =>
  block.text
    .split('\n')
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter((line) => line !== '');

interface Reference {
  key: string;
  source_key: string;
}

describe("the operator's quick start, from an empty directory to a price on their own plan", () => {
  // The directory the operator starts from: nothing in it but what the page has them write.
  const dir = tempDir('nerkh-operator-');
  let server: ServerProcess;
  let env: NodeJS.ProcessEnv;
  /** What the server prints to run, as printed: `node …/bin/nerkh.js accounts add …`. */
  let printed: string[] = [];

  before(async () => {
    assertBuilt();
    assert.equal(blocks.length, 5, `the section has ${blocks.length} code blocks, not the 5 this test follows`);
    writeFileSync(join(dir.path, 'nerkh.config.json'), configBlock.text);
    server = await startServer({}, { cwd: dir.path });
  });
  after(async () => {
    await server?.kill();
    dir.cleanup();
  });

  it('step 2: the start prints the commands that make an account on the first plan and a key, as the page shows them', async () => {
    const { value } = await pollUntil(async () => server.stdout, (out) => /^ {4}node \S+ keys issue \S+$/m.test(out), 15_000, 50, () => server.output());
    printed = [...value.matchAll(/^ {4}(node \S+ .+)$/gm)].map((match) => match[1]!);
    // The page writes the command as run in the clone; the start names this directory's way to it.
    const asOnThePage = printed.map((line) => line.replace(/^node \S+/, 'node bin/nerkh.js'));
    assert.deepEqual(asOnThePage, commands(keyBlock).filter((line) => !line.startsWith('export ')), server.output());
  });

  it('step 2: the printed commands work as printed, from that directory', async () => {
    assert.ok(printed.length === 2, 'step 2 gave the commands');
    const run = await bash(printed.join('\n'), cleanEnv({}), dir.path, 60_000);
    assert.equal(run.code, 0, `${run.stdout}${run.stderr}`);
    const key = /^nrk_[0-9A-Za-z]{32}$/m.exec(run.stdout)?.[0];
    assert.ok(key, `no key printed: ${run.stdout}`);
    env = cleanEnv({ KEY: key });
  });

  it("step 3: the plan's key lists the references with their source keys", async () => {
    const expected: Record<string, string> = { usd_free: 'ir_fx_free_usd', coin_emami: 'ir_coin_emami' };
    for (const line of commands(catalogueBlock)) {
      // The directory reloads keys within a second of the command: poll, as a person would retry.
      const { value } = await pollUntil(() => runCurl(line.replace(PAGE_BASE, server.base), env, dir.path), (outcome) => outcome.status === 200, 10_000, 250, show);
      const references = (JSON.parse(value.body) as { references: Reference[] }).references;
      const wanted = Object.keys(expected).find((key) => line.includes(key))!;
      assert.equal(references.find((reference) => reference.key === wanted)?.source_key, expected[wanted], `${line}: ${value.body.slice(0, 400)}`);
    }
  });

  it("steps 4 and 5: the feed written with the page's lines gives prices on the plan, within its refresh", async () => {
    const wrote = await bash(commands(feedBlock).join('\n'), env, dir.path, 10_000);
    assert.equal(wrote.code, 0, wrote.stderr);
    const [line] = commands(pricesBlock);
    const priced = (outcome: Outcome) => {
      if (outcome.status !== 200) return false;
      const rates = (JSON.parse(outcome.body) as { rates: { key: string; value: unknown; source: string }[] }).rates;
      return rates.length === 2 && rates.every((rate) => rate.value !== null && rate.source === 'desk');
    };
    const { value } = await pollUntil(() => runCurl(line!.replace(PAGE_BASE, server.base), env, dir.path), priced, PRICES_WITHIN_MS, 250, show);
    const rates = (JSON.parse(value.body) as { rates: { key: string; value: unknown }[] }).rates;
    assert.deepEqual(
      rates.map((rate) => [rate.key, rate.value]),
      [
        ['usd_free', 1098750],
        ['coin_emami', 1100483930],
      ],
    );
  });

  it('step 6: a typo in the feed is named on the public status page and on the keyed /v1/status', async () => {
    // The feed rewritten as step 4 says (a temporary file renamed over it), with one key misspelt.
    const feed = { updated_at: new Date().toISOString(), items: { ir_fx_fre_usd: 1098750, ir_coin_emami: 1100483930 } };
    writeFileSync(join(dir.path, 'feeds', '.desk.json.tmp'), JSON.stringify(feed));
    renameSync(join(dir.path, 'feeds', '.desk.json.tmp'), join(dir.path, 'feeds', 'desk.json'));
    const named = '1 item key matches no reference: <code dir="ltr">ir_fx_fre_usd</code>';
    await pollUntil(() => get(server.base, '/status'), (answer) => answer.text.includes(named), 10_000, 100, (answer) => answer.text.slice(-3000));
    const status = await runCurl(`curl -H "x-api-key: $KEY" ${server.base}/v1/status`, env, dir.path);
    assert.equal(status.status, 200, show(status));
    const desk = (JSON.parse(status.body) as { sources: { name: string; unknown_keys: unknown }[] }).sources.find((source) => source.name === 'desk');
    assert.deepEqual(desk?.unknown_keys, { count: 1, sample: ['ir_fx_fre_usd'] });
  });
});

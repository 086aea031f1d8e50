import { isAbsolute, join, relative } from 'node:path';
import { PACKAGE_ROOT, type AppConfig } from '../config.js';
import type { Store } from '../store/store.js';

/**
 * How to get a key, for a start that printed none: the demo account's name
 * when the built-in setup has one to issue keys for, else an account to make
 * first (a name no account has, on the first plan the config file names, or
 * `pro`, the demo's plan).
 */
export type KeyHint = { kind: 'issue'; account: string } | { kind: 'add'; account: string; plan: string };

/** The account a new deployment is pointed to; a number follows when the name is taken. */
const SUGGESTED_NAME = 'my-app';
const DEFAULT_PLAN = 'pro';

export async function keyHintFor(config: AppConfig, store: Store): Promise<KeyHint> {
  if (config.configPath === null && (await store.accounts.find('demo'))?.status === 'active') return { kind: 'issue', account: 'demo' };
  let account = SUGGESTED_NAME;
  for (let n = 2; (await store.accounts.find(account)) !== null; n++) account = `${SUGGESTED_NAME}-${n}`;
  return { kind: 'add', account, plan: Object.keys(config.plans)[0] ?? DEFAULT_PLAN };
}

/** The lines `nerkh serve` prints: why no key was shown, and the commands that make one, each on a line of its own. */
export function keyHintLines(config: AppConfig, hint: KeyHint | null): string[] {
  const why =
    config.configPath === null
      ? `no key printed (accounts already exist in ${config.databaseUrl ? 'the database' : config.dataDir})`
      : `no demo account with a config file (${config.configPath})`;
  const run = 'run from this directory with the same environment';
  const nerkh = nerkhCommand();
  if (hint === null) return [`  ${why}. Make an account and a key with \`${nerkh} accounts add <name> --plan <plan>\` and \`${nerkh} keys issue <name>\`, ${run}`];
  const commands = hint.kind === 'issue' ? [`${nerkh} keys issue ${hint.account}`] : [`${nerkh} accounts add ${hint.account} --plan ${hint.plan}`, `${nerkh} keys issue ${hint.account}`];
  return [`  ${why}. Get a key with (${run}):`, ...commands.map((command) => `    ${command}`)];
}

/**
 * How to run the admin command from the server's working directory: this
 * installation's `bin/nerkh.js` run by node, by a relative path when the
 * installation lies in that directory (`node bin/nerkh.js` in a clone),
 * else by its full path. Never `npx`, which spends seconds finding the package.
 */
export function nerkhCommand(cwd = process.cwd()): string {
  const bin = join(PACKAGE_ROOT, 'bin', 'nerkh.js');
  const fromHere = relative(cwd, bin);
  const path = fromHere.startsWith('..') || isAbsolute(fromHere) ? bin : fromHere;
  return `node ${/^[\w./-]+$/.test(path) ? path : `'${path.replace(/'/g, `'\\''`)}'`}`;
}

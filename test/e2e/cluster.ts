/**
 * Several real `nerkh serve` nodes sharing one store and one bus, as
 * docs/operations.md#several-nodes runs them: a PostgreSQL database made for
 * the test (dropped after), the shared Redis under a key prefix of the test's
 * own (its keys removed after), a config file and a data dir per node in a
 * temp dir. Make it in `describe`, `start` the nodes in `before` and `close`
 * it in `after`: whatever failed, no node, database or key outlives the run.
 */
import { join } from 'node:path';
import { tempDir } from '../support/env.js';
import { freshDatabase, type TestDatabase } from '../support/postgres.js';
import { randomPrefix, removePrefix } from '../support/redis.js';
import { REDIS_URL } from '../support/services.js';
import { get, pollUntil, startServer, type ServerProcess } from './helpers.js';

export class Cluster {
  readonly dir: { path: string; cleanup: () => void };
  /** Where the test writes the config file every node reads. */
  readonly configPath: string;
  /** The Redis key prefix the nodes share. */
  readonly prefix = randomPrefix();
  /** The nodes `start` started and the test has not taken out: `close` kills them. */
  readonly nodes: ServerProcess[] = [];
  private database: TestDatabase | null = null;
  private readonly prefixes = [this.prefix];

  /** `label` names the database and the temp dir (letters and underscores); `extraEnv` reaches every node and the CLI. */
  constructor(
    private readonly label: string,
    private readonly extraEnv: Record<string, string> = {},
  ) {
    this.dir = tempDir(`nerkh-${label}-`);
    this.configPath = join(this.dir.path, 'nerkh.config.json');
  }

  /** Make the database; its URL is `databaseUrl` from then on. */
  async createDatabase(): Promise<string> {
    this.database = await freshDatabase(this.label);
    return this.database.url;
  }

  get databaseUrl(): string {
    if (!this.database) throw new Error('createDatabase() first');
    return this.database.url;
  }

  /** The environment of the node (or CLI) `name`: a data dir of its own, everything else shared; another Redis and prefix if given. */
  env(name: string, redisUrl = REDIS_URL!, redisPrefix = this.prefix): Record<string, string> {
    return {
      NERKH_DATABASE_URL: this.databaseUrl,
      NERKH_REDIS_URL: redisUrl,
      NERKH_REDIS_PREFIX: redisPrefix,
      NERKH_CONFIG: this.configPath,
      NERKH_DATA_DIR: join(this.dir.path, name),
      NERKH_LOG_LEVEL: 'warn',
      ...this.extraEnv,
    };
  }

  /** Start a node a name on `env` (see `startNodes`), kept in `nodes`. */
  async start(...names: string[]): Promise<ServerProcess[]> {
    return startNodes(this.nodes, (name) => this.env(name), names);
  }

  /** Another Redis prefix of the test's own, its keys removed by `close` too. */
  newPrefix(): string {
    const prefix = randomPrefix();
    this.prefixes.push(prefix);
    return prefix;
  }

  async close(): Promise<void> {
    await Promise.all(this.nodes.map((node) => node.kill()));
    await this.database?.drop();
    for (const prefix of this.prefixes) await removePrefix(REDIS_URL!, prefix);
    this.dir.cleanup();
  }
}

/**
 * Start `nerkh serve` once a name, with `env(name)`, pushed to `into` in the
 * order of `names` (so the caller's clean-up finds every node that started,
 * whatever failed): the first alone, as it creates the schema and takes the
 * lease, the others together once it has. Returns when every one answers `/readyz`.
 */
export async function startNodes(into: ServerProcess[], env: (name: string) => Record<string, string>, names: string[]): Promise<ServerProcess[]> {
  const [first, ...rest] = names;
  if (first === undefined) return [];
  const started = [await startServer(env(first))];
  into.push(started[0]!);
  const others = await Promise.allSettled(rest.map((name) => startServer(env(name))));
  for (const other of others) {
    if (other.status === 'rejected') continue;
    into.push(other.value);
    started.push(other.value);
  }
  const failed = others.find((other) => other.status === 'rejected');
  if (failed) throw failed.reason;
  for (const node of started) await pollUntil(() => get(node.base, '/readyz'), (r) => r.status === 200, 10_000);
  return started;
}

/** The node among `among` that a status page's node list names leader (node ids carry the process id), if any. */
export function leaderAmong(rows: { id: string; leader: boolean }[], among: ServerProcess[]): ServerProcess | undefined {
  return among.find((node) => rows.some((row) => row.leader && row.id.includes(`-${node.child.pid}-`)));
}

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { ZoneTime } from '../../src/domain/time.js';
import { Buckets } from '../../src/history/ranges/buckets.js';
import { Store } from '../../src/store/store.js';
import { assertBuilt, BIN, cleanEnv, cliOk, ROOT, runCli } from '../e2e/helpers.js';
import { tempDir } from '../support/env.js';
import { dialects } from '../support/harness.js';

const DAY = 86_400_000;
const time = new ZoneTime('Asia/Tehran');
const buckets = new Buckets(time);

assertBuilt();

for (const dialect of dialects()) {
  describe(`nerkh history import and export (${dialect.name})`, dialect.options, () => {
    const dir = tempDir('nerkh-history-cli-');
    const database = `nerkh_hist_cli_${process.pid}_${Math.floor(Math.random() * 1e6)}`;
    const admin = dialect.databaseUrl ? new pg.Pool({ connectionString: dialect.databaseUrl, max: 1 }) : null;
    let env: NodeJS.ProcessEnv;
    let databaseUrl: string | null = null;
    // Three days ago, 10:00 in Tehran: the past, inside the minute retention.
    const day = buckets.startOfDate(...buckets.localDate(Date.now() - 3 * DAY));
    const at = (minutes: number, seconds = 0) => time.format(day + 10 * 3_600_000 + minutes * 60_000 + seconds * 1000);
    const file = (name: string, text: string) => {
      const path = join(dir.path, name);
      writeFileSync(path, text);
      return path;
    };

    before(async () => {
      if (admin) {
        await admin.query(`create database ${database}`);
        const url = new URL(dialect.databaseUrl!);
        url.pathname = `/${database}`;
        databaseUrl = url.toString();
      }
      env = cleanEnv({ NERKH_DATA_DIR: join(dir.path, 'var'), ...(databaseUrl ? { NERKH_DATABASE_URL: databaseUrl } : {}) });
      // Only `serve` creates a store (an admin command refuses to): make it as serve does.
      await (await Store.open({ databaseUrl, dataDir: join(dir.path, 'var') })).close();
    });
    after(async () => {
      if (admin) {
        await admin.query(`drop database if exists ${database} with (force)`);
        await admin.end();
      }
      dir.cleanup();
    });

    /** Every stored candle, in a fixed order: what "changes nothing" is checked against. */
    async function dump(): Promise<unknown[]> {
      const store = await Store.open({ databaseUrl, dataDir: join(dir.path, 'var') });
      try {
        const rows: unknown[] = [];
        for (const grain of ['minute', 'hour', 'day'] as const) rows.push(...(await store.history.range(grain, 'usd_free', 0, 4e12)).map((c) => ({ grain, ...c })), ...(await store.history.range(grain, 'eur_free', 0, 4e12)).map((c) => ({ grain, ...c })));
        return rows;
      } finally {
        await store.close();
      }
    }

    it('imports values served at times into exact candles, and importing the same file again changes nothing', async () => {
      const csv = file(
        'points.csv',
        ['key,time,value', `usd,${at(0, 5)},0.1`, `usd_free,${at(0, 20)},123456789012345678`, `USD,${at(0, 40)},0.3`, `usd,${at(1, 0)},1103120725`, `eur,${at(75)},1.5`, ''].join('\r\n'),
      );
      const first = await cliOk(env, ['history', 'import', csv]);
      assert.match(first.stdout, /^imported 5 rows from .*points\.csv in \d+\.\d s: 3 minute, 2 hourly and 2 daily candles written \(7 new, 0 updated\)\n$/);
      assert.equal(first.stderr, '', 'a small import prints no progress');
      const stored = await dump();
      const again = await cliOk(env, ['history', 'import', csv, '--json']);
      const { seconds, ...summary } = JSON.parse(again.stdout) as { seconds: number };
      assert.ok(seconds >= 0 && seconds < 20, String(seconds));
      const unchanged = (count: number) => ({ added: 0, updated: 0, unchanged: count });
      assert.deepEqual(summary, { format: 'points', rows: 5, candles: { minute: unchanged(3), hour: unchanged(2), day: unchanged(2) }, kept: 0, changed: 0 });
      assert.deepEqual(await dump(), stored, 'the second import changed nothing');
      assert.match((await cliOk(env, ['history', 'import', csv])).stdout, /^read 5 rows from .* nothing changed \(7 candles already present\)\n$/);


      const exported = await cliOk(env, ['history', 'export', 'usd', '--interval', '1m', '--from', at(0), '--to', at(5), '--format', 'json']);
      assert.ok(
        exported.stdout.includes(`"open":0.1,"high":123456789012345678,"low":0.1,"close":0.3,"points":3},{"t":"${at(1)}"`),
        exported.stdout,
      );
      const hourly = await cliOk(env, ['history', 'export', 'usd_free', '--interval', '1h', '--from', at(0), '--to', at(5)]);
      assert.deepEqual(hourly.stdout.trim().split('\n'), ['key,time,open,high,low,close,points', `usd_free,${at(0)},0.1,123456789012345678,0.1,1103120725,4`]);

      // A value in a new minute of that hour: the minute is new, its hour and day change, and the summary says just that.
      const more = file('more.csv', `key,time,value\nusd,${at(2, 10)},7\n`);
      assert.match((await cliOk(env, ['history', 'import', more])).stdout, /: 1 minute, 1 hourly and 1 daily candles written \(1 new, 2 updated\)\n$/);
      assert.match((await cliOk(env, ['history', 'import', more])).stdout, /nothing changed \(3 candles already present\)/);
    });

    it('reports every bad line with its number, and imports nothing from a file with one', async () => {
      const before = await dump();
      const csv = file(
        'bad.csv',
        [
          'key,time,value',
          `usd,${at(30)},5`,
          `nope,${at(30)},5`,
          `usd,${time.day(day)},5`,
          `usd,${at(31)},-1`,
          `usd,${at(32)},1,2`,
          `usd,${at(33)},abc`,
          `usd,${time.format(Date.now() + 60_000)},5`,
          `usd,${at(34)},7`,
        ].join('\n'),
      );
      const result = await runCli(env, ['history', 'import', csv]);
      assert.equal(result.code, 1);
      assert.equal(result.stdout, '');
      const lines = result.stderr.trim().split('\n');
      assert.deepEqual(
        lines.map((line) => /line (\d+)/.exec(line)?.[1] ?? 'summary'),
        ['3', '4', '5', '6', '7', '8', 'summary'],
      );
      assert.match(lines[0]!, /^nerkh: .*bad\.csv line 3: unknown reference key "nope"$/);
      assert.match(lines[1]!, /line 4: time: needs a date-time with an offset/);
      assert.match(lines[2]!, /line 5: value: "-1" is not a number above zero/);
      assert.match(lines[3]!, /line 6: expected 3 columns, got 4/);
      assert.match(lines[5]!, /line 8: time: lies today or later/);
      assert.match(lines[6]!, /^nerkh: .*bad\.csv: 6 bad lines; nothing imported$/);
      assert.doesNotMatch(result.stderr, /\n\s+at /);
      assert.deepEqual(await dump(), before, 'not even the good lines were written');
    });

    it('imports daily candles (Jalali dates too), exports them in the same format, and never replaces recorded days', async () => {
      const first = day - 10 * DAY;
      const jalali = time.jalaliDate(first + DAY).replaceAll('/', '-');
      const csv = file('daily.csv', ['key,date,open,high,low,close', `eur,${time.day(first)},1.5,2.25,1.25,2`, `eur_free,${jalali},2,2.5,1.75,2.125`].join('\n'));
      assert.match((await cliOk(env, ['history', 'import', csv])).stdout, /0 minute, 0 hourly and 2 daily candles written/);
      const exported = await cliOk(env, ['history', 'export', 'eur', '--from', time.day(first), '--to', time.day(first + DAY)]);
      const lines = exported.stdout.trim().split('\n');
      assert.deepEqual(lines, ['key,date,open,high,low,close,points', `eur_free,${time.day(first)},1.5,2.25,1.25,2,0`, `eur_free,${time.day(first + DAY)},2,2.5,1.75,2.125,0`]);
      // The export is itself an importable file: importing it changes nothing.
      const stored = await dump();
      await cliOk(env, ['history', 'import', file('round-trip.csv', exported.stdout)]);
      assert.deepEqual(await dump(), stored);

      // A day the service recorded is kept as served; the import says so.
      const store = await Store.open({ databaseUrl, dataDir: join(dir.path, 'var') });
      const recordedDay = first - 5 * DAY;
      await store.history.write([{ grain: 'day', reference: 'eur_free', candle: { start: recordedDay, open: '9', high: '9', low: '9', close: '9', points: 40, source: 'alpha', closeAt: recordedDay + 1000 } }]);
      await store.close();
      const result = await cliOk(env, ['history', 'import', file('over.csv', `key,date,open,high,low,close\neur,${time.day(recordedDay)},1,1,1,1\n`)]);
      assert.match(result.stdout, /1 recorded candles kept as they were/);
      assert.ok((await dump()).some((row) => (row as { start: number; close: string }).start === recordedDay && (row as { close: string }).close === '9'), '(await dump()).some((row) => (row as { start: number; close: string }).start === recordedDay && (row as { close: string }).close === \'9\')');
    });

    it('combines recorded and imported minutes of one hour, keeps the recorded minute, and says so', async () => {
      // The service recorded two values in the 12:00 minute: that minute, its hour and its day.
      const noon = day + 12 * 3_600_000;
      const recorded = { open: '5', high: '6', low: '5', close: '6', points: 2, source: 'alpha', closeAt: noon + 30_000 };
      const store = await Store.open({ databaseUrl, dataDir: join(dir.path, 'var') });
      await store.history.write((['minute', 'hour', 'day'] as const).map((grain) => ({ grain, reference: 'gbp_free', candle: { ...recorded, start: grain === 'day' ? day : noon } })));
      await store.close();
      const csv = file('around-recorded.csv', ['key,time,value', `gbp,${time.format(noon + 40_000)},9`, `gbp,${time.format(noon + 5 * 60_000)},7`].join('\n'));
      const first = await cliOk(env, ['history', 'import', csv]);
      assert.match(first.stdout, /: 1 minute, 1 hourly and 1 daily candles written \(1 new, 2 updated\); 1 recorded candles kept as they were\n$/);
      const hourly = await cliOk(env, ['history', 'export', 'gbp_free', '--interval', '1h', '--from', time.format(noon), '--to', time.format(noon + 60_000)]);
      assert.equal(hourly.stdout.trim().split('\n')[1], `gbp_free,${time.format(noon)},5,7,5,7,3`, 'the recorded minute and the imported one, and not the 9 of the kept minute');
      assert.match((await cliOk(env, ['history', 'import', csv])).stdout, /nothing changed \(3 candles already present; 1 recorded candles kept as they were\)\n$/);
    });

    it('an import interrupted by Ctrl-C keeps what it wrote and says how far it came; importing again finishes it', async () => {
      // 20,000 minutes of one reference ending two days ago: some 14 days, written a few days at a time.
      const end = buckets.startOfDate(...buckets.localDate(Date.now() - 2 * DAY));
      const minutes = 20_000;
      const lines = ['key,time,value'];
      for (let i = 0; i < minutes; i++) lines.push(`aed_free,${time.format(end - (minutes - i) * 60_000 + 1000)},${100 + (i % 50)}`);
      const csv = file('long.csv', lines.join('\n'));
      const child = spawn(process.execPath, [BIN, 'history', 'import', csv, '--progress', '0.001'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      let interrupted = false;
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        stderr += chunk;
        // At the first transaction written, as a user would press Ctrl-C.
        if (!interrupted && /rows imported/.test(stderr)) interrupted = child.kill('SIGINT');
      });
      const [code] = (await once(child, 'close')) as [number | null];
      assert.equal(code, 130, stderr);
      const stopped = /: interrupted after (\d+) of 20000 rows \((\d+) candles written, and they stay\); importing the file again finishes it\n$/.exec(stderr);
      assert.ok(stopped, stderr);
      const [rowsDone, written] = [Number(stopped[1]), Number(stopped[2])];
      assert.ok(rowsDone > 0 && rowsDone < minutes && written > rowsDone, stderr);

      const total = minutes + Math.ceil(minutes / 60) + Math.ceil(minutes / 1440);
      const rest = await cliOk(env, ['history', 'import', csv]);
      const counts = /written \((\d+) new, 0 updated\); (\d+) already present\n$/.exec(rest.stdout);
      assert.ok(counts, rest.stdout);
      assert.equal(Number(counts[1]) + Number(counts[2]), total, rest.stdout);
      assert.equal(Number(counts[2]), written, 'what the interrupted import wrote is there, and only that');
      assert.match((await cliOk(env, ['history', 'import', csv])).stdout, new RegExp(`nothing changed \\(${total} candles already present\\)`));
    });

    it('refuses bad export options in one line', async () => {
      for (const [args, pattern] of [
        [['history', 'export', 'nope'], /unknown reference "nope"/],
        [['history', 'export', 'usd', '--interval', '2m'], /interval/],
        [['history', 'export', 'usd', '--format', 'xml'], /--format/],
        [['history', 'export', 'usd', '--from', 'someday'], /--from/],
      ] as const) {
        const result = await runCli(env, [...args]);
        assert.equal(result.code, 1, result.stderr);
        assert.match(result.stderr, /^nerkh: [^\n]+\n$/);
        assert.match(result.stderr, pattern);
      }
    });
  });
}

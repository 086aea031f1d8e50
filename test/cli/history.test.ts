import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { ZoneTime } from '../../src/domain/time.js';
import { Buckets } from '../../src/history/buckets.js';
import { Store } from '../../src/store/store.js';
import { assertBuilt, cleanEnv, cliOk, runCli } from '../e2e/helpers.js';
import { tempDir } from '../support/env.js';
import { DIALECTS } from '../support/harness.js';

const DAY = 86_400_000;
const time = new ZoneTime('Asia/Tehran');
const buckets = new Buckets(time);

assertBuilt();

for (const dialect of DIALECTS) {
  describe(`nerkh history import and export (${dialect.name})`, () => {
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
      assert.match(first.stdout, /imported 5 rows .*: 3 minute, 2 hourly and 2 daily candles written/);
      const stored = await dump();
      const again = await cliOk(env, ['history', 'import', csv, '--json']);
      assert.deepEqual(JSON.parse(again.stdout), { format: 'points', rows: 5, candles: { minute: 3, hour: 2, day: 2 }, kept: 0 });
      assert.deepEqual(await dump(), stored, 'the second import changed nothing');

      const exported = await cliOk(env, ['history', 'export', 'usd', '--interval', '1m', '--from', at(0), '--to', at(5), '--format', 'json']);
      assert.ok(
        exported.stdout.includes(`"open":0.1,"high":123456789012345678,"low":0.1,"close":0.3,"points":3},{"t":"${at(1)}"`),
        exported.stdout,
      );
      const hourly = await cliOk(env, ['history', 'export', 'usd_free', '--interval', '1h', '--from', at(0), '--to', at(5)]);
      assert.deepEqual(hourly.stdout.trim().split('\n'), ['key,time,open,high,low,close,points', `usd_free,${at(0)},0.1,123456789012345678,0.1,1103120725,4`]);
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
      assert.ok((await dump()).some((row) => (row as { start: number; close: string }).start === recordedDay && (row as { close: string }).close === '9'));
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

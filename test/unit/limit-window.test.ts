/**
 * Which window the rate-limit headers name (src/access/limiter/decision.ts),
 * on the in-process limiter with time given per request: the same window
 * answer after answer, until the other one binds.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LimitDecision, LimitSpec } from '../../src/access/limiter/limiter.js';
import { MemoryLimiter } from '../../src/access/limiter/memory.js';
import { ZoneTime } from '../../src/domain/time.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
/** A Tehran midnight: the start of a day window. */
const DAY = Date.parse('2026-03-01T00:00:00+03:30');

function answers(spec: LimitSpec, times: readonly number[], key = 'k'): LimitDecision[] {
  const limiter = new MemoryLimiter(new ZoneTime('Asia/Tehran'));
  return times.map((at) => limiter.consume(key, spec, at));
}

/** The windows named, run-length encoded: `day×29 minute×2`. */
function runs(decisions: readonly LimitDecision[]): string {
  const out: [string, number][] = [];
  for (const { window } of decisions) {
    const last = out.at(-1);
    if (last && last[0] === window) last[1]++;
    else out.push([window, 1]);
  }
  return out.map(([window, count]) => `${window}×${count}`).join(' ');
}

describe('the window the rate-limit headers name', () => {
  it('stays the day across a new minute when the day binds (30 a minute, 40 a day)', () => {
    const spec = { perMinute: 30, perDay: 40 };
    // Five in one minute, then 25 in the next: the share-left rule named the day, then the minute, within that minute.
    const times = [...Array.from({ length: 5 }, (_, i) => DAY + 10 * MINUTE + 5 * SECOND + i * 100), ...Array.from({ length: 25 }, (_, i) => DAY + 11 * MINUTE + SECOND + i * 100)];
    const decisions = answers(spec, times);
    assert.equal(runs(decisions), 'day×30');
    assert.deepEqual(
      decisions.map((d) => d.remaining),
      Array.from({ length: 30 }, (_, i) => 39 - i),
    );
    assert.ok(decisions.every((d) => d.limit === 40 && d.allowed), 'decisions.every((d) => d.limit === 40 && d.allowed)');
  });

  it('stays the minute for a day the minute spends exactly (60 a minute, 86,400 a day), used flat out with jitter', () => {
    const spec = { perMinute: 60, perDay: 86_400 };
    const times = Array.from({ length: 600 }, (_, i) => DAY + 500 + i * SECOND + (i % 3) * 7);
    const decisions = answers(spec, times);
    assert.equal(runs(decisions), 'minute×600');
    assert.ok(decisions.every((d) => d.allowed && d.limit === 60), 'decisions.every((d) => d.allowed && d.limit === 60)');
  });

  it('names the day until what is left of it can no longer run out, then the minute until midnight (600 a minute, 200,000 a day)', () => {
    const spec = { perMinute: 600, perDay: 200_000 };
    const times = Array.from({ length: 144 }, (_, i) => DAY + i * 10 * MINUTE + 30 * SECOND);
    const decisions = answers(spec, times);
    const switched = decisions.findIndex((d) => d.window === 'minute');
    assert.match(runs(decisions), /^day×\d+ minute×\d+$/, 'one change in the day');
    // 199,9xx left: at 600 a minute that takes about 333 minutes, so the minute binds from about 18:27 on.
    const at = new ZoneTime('Asia/Tehran').format(times[switched]!);
    assert.ok(at >= '2026-03-01T18:20' && at <= '2026-03-01T18:40', `changed at ${at}`);
    assert.equal(decisions[switched - 1]!.limit, 200_000);
  });

  it('names a spent window while it is spent: what refuses, with its Retry-After (30 a minute, 40 a day)', () => {
    const spec = { perMinute: 30, perDay: 40 };
    const noon = DAY + 12 * 60 * MINUTE;
    const first = Array.from({ length: 31 }, (_, i) => noon + SECOND + i * 100);
    const second = Array.from({ length: 11 }, (_, i) => noon + MINUTE + SECOND + i * 100);
    const decisions = answers(spec, [...first, ...second]);
    assert.equal(runs(decisions), 'day×29 minute×2 day×11');
    const lastOfMinute = decisions[29]!;
    assert.deepEqual([lastOfMinute.allowed, lastOfMinute.window, lastOfMinute.remaining], [true, 'minute', 0]);
    const refusedByMinute = decisions[30]!;
    assert.deepEqual([refusedByMinute.allowed, refusedByMinute.window, refusedByMinute.retryAfterSeconds], [false, 'minute', 56]);
    assert.deepEqual(
      decisions.slice(31, 41).map((d) => d.remaining),
      [9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
    );
    const refusedByDay = decisions[41]!;
    assert.deepEqual([refusedByDay.allowed, refusedByDay.window, refusedByDay.remaining], [false, 'day', 0]);
    assert.equal(refusedByDay.retryAfterSeconds, refusedByDay.resetSeconds);
    assert.ok(refusedByDay.retryAfterSeconds > 11 * 3600, `the day's wait: ${refusedByDay.retryAfterSeconds} s`);
  });

  it('names the minute without a day limit, and in the last minute of a day that cannot run out', () => {
    assert.equal(runs(answers({ perMinute: 10, perDay: null }, Array.from({ length: 20 }, (_, i) => DAY + i * 5 * SECOND))), 'minute×20');
    const lastMinute = DAY + 24 * 60 * MINUTE - 50 * SECOND;
    assert.equal(runs(answers({ perMinute: 30, perDay: 40 }, Array.from({ length: 20 }, (_, i) => lastMinute + i * 100))), 'minute×20');
  });
});

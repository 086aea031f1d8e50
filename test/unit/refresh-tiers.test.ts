import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RefreshTiers } from '../../src/live/refresh-tiers.js';
import type { Snapshot } from '../../src/live/snapshot.js';

/** A whole minute, so wall-clock multiples of 1, 10 and 60 s all fall on T. */
const T = Date.parse('2026-11-21T10:33:00Z');
const S = 1000;

function snap(version: number, builtAt: number): Snapshot {
  return { version, builtAt, rates: new Map(), lastUpdate: null, counts: { ok: 0, stale: 0, unavailable: 0 } };
}

/** A snapshot from before the minute T, then two built 5 s and 30 s into it. */
function minuteOfSnapshots() {
  const s0 = snap(0, T - 30 * S);
  const history = new RefreshTiers(s0, 60);
  const s1 = snap(1, T + 5 * S);
  const s2 = snap(2, T + 30 * S);
  history.push(s1);
  history.push(s2);
  return { history, s0, s1, s2 };
}

describe('RefreshTiers', () => {
  it('shows the latest snapshot for interval 0 (live)', () => {
    const history = new RefreshTiers(snap(0, T - 30 * S), 60);
    const s1 = snap(1, T + 5 * S);
    history.push(s1);
    assert.equal(history.forInterval(0, T + 6 * S), s1);
    assert.equal(history.latest(), s1);
    // `now` does not matter for a live caller.
    assert.equal(history.forInterval(0, T - 600 * S), s1);
  });

  it('shows a 60 s tier the snapshot as of the last whole minute', () => {
    const { history, s0, s2 } = minuteOfSnapshots();
    assert.equal(history.forInterval(60, T + 45 * S), s0);
    assert.equal(history.forInterval(60, T + 59_999), s0);
    assert.equal(history.forInterval(60, T + 60 * S), s2);
    assert.equal(history.forInterval(60, T + 119 * S), s2);
  });

  it('shows faster tiers newer snapshots', () => {
    const { history, s0, s1, s2 } = minuteOfSnapshots();
    const now = T + 45_500;
    assert.equal(history.forInterval(1, now), s2);
    assert.equal(history.forInterval(10, now), s2);
    assert.equal(history.forInterval(10, T + 29_999), s1);
    assert.equal(history.forInterval(1, T + 29_999), s1);
    assert.equal(history.forInterval(60, now), s0);
  });

  it('counts a snapshot built exactly on the boundary', () => {
    const s0 = snap(0, T - 30 * S);
    const history = new RefreshTiers(s0, 60);
    const s1 = snap(1, T);
    history.push(s1);
    assert.equal(history.forInterval(60, T), s1);
    assert.equal(history.forInterval(60, T + 30 * S), s1);
    assert.equal(history.forInterval(60, T - 1), s0);
  });

  it('falls back to the oldest snapshot when none is as old as the boundary', () => {
    const s0 = snap(0, T + 10 * S);
    const history = new RefreshTiers(s0, 60);
    history.push(snap(1, T + 20 * S));
    assert.equal(history.forInterval(60, T + 30 * S), s0);
  });

  it('sees a newly pushed snapshot within the same boundary (no stale tier cache)', () => {
    const s0 = snap(0, T - 30 * S);
    const history = new RefreshTiers(s0, 60);
    const now = T + 70 * S;
    assert.equal(history.forInterval(60, now), s0);
    const s1 = snap(1, T + 60 * S);
    history.push(s1);
    assert.equal(history.forInterval(60, now), s1);
  });

  it('returns the same answer for repeated calls at the same boundary', () => {
    const s0 = snap(0, T - 30 * S);
    const history = new RefreshTiers(s0, 60);
    history.push(snap(1, T + 5 * S));
    assert.equal(history.forInterval(60, T + 10 * S), s0);
    assert.equal(history.forInterval(60, T + 50 * S), s0);
    assert.equal(history.forInterval(1, T + 10 * S).version, 1);
  });

  it('trims snapshots no tier can see, keeping what the longest tier needs', () => {
    const history = new RefreshTiers(snap(0, T), 60);
    const byVersion = new Map<number, Snapshot>();
    for (let i = 1; i <= 30; i++) {
      const s = snap(i, T + i * 10 * S);
      byVersion.set(i, s);
      history.push(s);
    }
    // Latest at T+300 s; the 60 s tier can need anything back to T+240 s (boundary at T+240 s while now < T+300 s).
    assert.equal(history.forInterval(60, T + 299 * S), byVersion.get(24));
    assert.equal(history.forInterval(60, T + 300 * S), byVersion.get(30));
    // Everything older than T+240 s is gone: an old boundary falls back to the oldest kept snapshot.
    assert.equal(history.forInterval(60, T + 1 * S), byVersion.get(24));
    assert.equal(history.forInterval(10, T + 125 * S), byVersion.get(24));
    // What is kept is still reachable at its own time.
    assert.equal(history.forInterval(10, T + 255 * S), byVersion.get(25));
  });

  it('keeps at least one second of history for a history made with interval 0', () => {
    const s0 = snap(0, T);
    const history = new RefreshTiers(s0, 0);
    const s1 = snap(1, T + 500);
    history.push(s1);
    assert.equal(history.forInterval(1, T + 900), s0);
    assert.equal(history.forInterval(1, T + 1000), s1);
  });
});

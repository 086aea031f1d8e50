import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { loadReferenceData } from '../../src/config-checks.js';
import { applyOverrides, buildPlans, DEFAULT_PLANS } from '../../src/domain/plan.js';
import { tempDir } from '../support/env.js';

const dir = tempDir('nerkh-plans-');
after(() => dir.cleanup());

/** The plans a config file with these `plans` makes, read as the server and the CLI read it. */
function plansOf(plans: unknown) {
  const path = join(dir.path, `config-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(path, JSON.stringify({ plans }));
  return loadReferenceData(loadConfig({ NERKH_CONFIG: path }, dir.path)).plans;
}

describe('plans from the config file', () => {
  it('a custom plan that lists stream and history gets pro’s allowances for them, not basic’s zeros', () => {
    const board = plansOf({ board: { services: ['detail', 'stream', 'history'] } }).get('board')!;
    assert.deepEqual(board.services, ['detail', 'stream', 'history']);
    assert.equal(board.max_streams, DEFAULT_PLANS.pro!.max_streams);
    assert.equal(board.history_days, DEFAULT_PLANS.pro!.history_days);
    // The rest starts from basic, as before.
    assert.equal(board.requests_per_minute, DEFAULT_PLANS.basic!.requests_per_minute);
    assert.equal(board.max_references, DEFAULT_PLANS.basic!.max_references);
  });

  it('a new plan refreshes as often as pro unless it says otherwise; basic itself keeps its minute', () => {
    const plans = plansOf({ shop: { services: ['detail'] }, slow: { services: ['detail'], refresh_interval_seconds: 60 }, live: { refresh_interval_seconds: 0 }, basic: { requests_per_minute: 120 } });
    assert.equal(plans.get('shop')!.refresh_interval_seconds, DEFAULT_PLANS.pro!.refresh_interval_seconds);
    assert.equal(DEFAULT_PLANS.pro!.refresh_interval_seconds, 10);
    assert.equal(plans.get('slow')!.refresh_interval_seconds, 60);
    assert.equal(plans.get('live')!.refresh_interval_seconds, 0, 'a given 0 (live) is kept');
    assert.equal(plans.get('basic')!.refresh_interval_seconds, DEFAULT_PLANS.basic!.refresh_interval_seconds);
    assert.equal(plans.get('shop')!.requests_per_minute, DEFAULT_PLANS.basic!.requests_per_minute, "the rest of a new plan is basic's");
  });

  it('keeps an allowance the config gives, zero included, and gives none for a service not listed', () => {
    const plans = plansOf({ mute: { services: ['detail', 'stream'], max_streams: 0 }, two: { services: ['stream'], max_streams: 2, history_days: 7 }, plain: { services: ['detail'] } });
    assert.equal(plans.get('mute')!.max_streams, 0);
    assert.equal(plans.get('two')!.max_streams, 2);
    assert.equal(plans.get('two')!.history_days, 7, 'history_days as given, though history is not listed');
    assert.equal(plans.get('plain')!.max_streams, 0);
    assert.equal(plans.get('plain')!.history_days, 0);
  });

  it('basic given the stream service gets an allowance too; pro and enterprise keep their own', () => {
    const plans = plansOf({ basic: { services: ['catalogue', 'detail', 'usage', 'stream'] }, pro: { services: ['detail', 'stream'] }, enterprise: { max_references: 500 } });
    assert.equal(plans.get('basic')!.max_streams, 5);
    assert.equal(plans.get('basic')!.history_days, 0, 'history not listed: today only, as basic is');
    assert.equal(plans.get('pro')!.max_streams, 5);
    assert.equal(plans.get('enterprise')!.max_streams, 100);
  });

  it('an account whose overrides add stream gets the allowance too, unless the overrides give one', () => {
    const basic = buildPlans(['usd_free']).get('basic')!;
    assert.equal(applyOverrides(basic, { services: ['detail', 'stream'] }).max_streams, 5);
    assert.equal(applyOverrides(basic, { services: ['detail', 'stream'], max_streams: 1 }).max_streams, 1);
    assert.equal(applyOverrides(basic, { requests_per_minute: 5 }).max_streams, 0);
    const board = buildPlans(['usd_free'], { board: { services: ['detail', 'stream'], max_streams: 3 } }).get('board')!;
    assert.equal(applyOverrides(board, { services: ['stream'] }).max_streams, 3, 'the plan already had stream: its own allowance stands');
  });
});

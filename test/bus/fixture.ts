import { join } from 'node:path';
import type { SharedSnapshot } from '../../src/bus/snapshot-bus.js';
import { ZoneTime } from '../../src/domain/time.js';
import { RatesEngine } from '../../src/live/engine.js';
import { SourceMonitor } from '../../src/sources/monitor.js';
import { catalogueWithoutBands, fileSources, tempDir, writeRaw } from '../support/env.js';

export const time = new ZoneTime('Asia/Tehran');
export const BIG = '123456789012345678';

/**
 * A real engine over the bundled catalogue and two file sources: one fresh
 * (with a value of more digits than a double holds, and a decimal with a
 * trailing zero), one an hour old, so the snapshot has ok, stale and
 * unavailable rates and a stale-fallback memory.
 */
export async function realEngine(options: { empty?: boolean } = {}): Promise<{ engine: RatesEngine; monitor: SourceMonitor; shared: () => SharedSnapshot; close: () => void }> {
  const dir = tempDir('nerkh-bus-');
  const configs = fileSources(join(dir.path, 'sources'), ['alpha', 'beta'], 120);
  const now = new Date().toISOString();
  const old = new Date(Date.now() - 3_600_000).toISOString();
  if (options.empty) {
    for (const config of configs) writeRaw(config.path!, `{"updated_at":"${now}","items":{}}`);
  } else {
    // `ir_fx_free_usdx` matches no reference: the health carries it as an unknown key.
    writeRaw(configs[0]!.path!, `{"updated_at":"${now}","items":{"ir_fx_free_usd":${BIG},"intl_xau_usd_spot":2650.50,"ir_coin_emami":{"value":1.5e9,"updated_at":"${now}"},"ir_fx_free_usdx":5}}`);
    writeRaw(configs[1]!.path!, `{"updated_at":"${old}","items":{"ir_gold_18k_gram":98765432.10,"ir_fx_free_eur":650000}}`);
  }
  // Without sanity bands: the 18-digit value is about digits on the wire, not a plausible price.
  const catalogue = catalogueWithoutBands();
  const monitor = new SourceMonitor(configs, undefined, { wantedKeys: new Set(catalogue.references.map((reference) => reference.source_key)) });
  const engine = new RatesEngine(catalogue, monitor, time);
  await engine.start();
  const shared = (): SharedSnapshot => ({ snapshot: engine.current(), health: monitor.health(Date.now()), lastKnown: engine.knownValues(), leader: 'node-a' });
  return {
    engine,
    monitor,
    shared,
    close: () => {
      engine.stop();
      dir.cleanup();
    },
  };
}

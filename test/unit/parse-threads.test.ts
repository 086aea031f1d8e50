/**
 * Source documents parsed in worker threads (src/sources/parse-threads.ts),
 * with real threads: the values come back with their digits as written; a
 * JSONPath filter whose regular expression backtracks catastrophically is
 * stopped at the source's deadline while the event loop keeps turning; a
 * parse past its thread's heap is refused with the reason, not a crash;
 * a document the parser refuses is a format error with the parser's reason.
 * After each failure the next document is parsed on a fresh thread.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ZoneTime } from '../../src/domain/time.js';
import { compileFormat, type FormatFields } from '../../src/sources/formats/compile.js';
import { DocumentParseThreads, ParseStoppedError, parseRules } from '../../src/sources/parse-threads.js';
import { NoUsableValuesError, SourceFormatError, type SourceData } from '../../src/sources/source-data.js';
import { ecbXml } from '../fault/format-fixtures.js';

const MiB = 1024 * 1024;
const tehran = new ZoneTime('Asia/Tehran');
const now = Date.now();
/** A filter whose `(a+)+` backtracks exponentially on a run of `a` that does not end the string (thirty characters: seconds to minutes). */
const CATASTROPHIC = { format: 'mapping', items: { intl_fx_eurusd: "$.data[?match(@.symbol, '(a+)+')].sell" } } as const;
const hostile = JSON.stringify({ data: [{ symbol: `${'a'.repeat(29)}!`, sell: '1.0823' }] });
const matching = JSON.stringify({ data: [{ symbol: 'aaaa', sell: '1.0823' }] });

const threads: DocumentParseThreads[] = [];
after(() => Promise.all(threads.map((pool) => pool.close())));

function pool(maxBytes = MiB): DocumentParseThreads {
  const made = new DocumentParseThreads({ threads: 1, maxBytes });
  threads.push(made);
  return made;
}

function parse(on: DocumentParseThreads, fields: FormatFields, text: string, timeoutMs = 60_000): Promise<SourceData> {
  return on.parse(new TextEncoder().encode(text), parseRules(compileFormat(fields, tehran), null, timeoutMs), { fallbackTime: now, now });
}

const values = (data: SourceData) => Object.fromEntries([...data.items].map(([key, value]) => [key, value.raw]));

describe('document parse threads', () => {
  it('hands back every value with the digits the source wrote', async () => {
    const data = await parse(pool(), { format: 'nerkh' }, '{"items":{"big":9007199254740993,"trailing":71.250,"exp":1.5e3}}');
    assert.deepEqual(values(data), { big: '9007199254740993', trailing: '71.250', exp: '1.5e3' });
  });

  it('stops a backtracking JSONPath filter at the deadline, the event loop turning meanwhile, then parses the next document', async () => {
    const on = pool();
    // The loop's longest gap between 10 ms ticks while the parse runs: a parse on the loop would hold it for the whole deadline.
    let longestGap = 0;
    let last = performance.now();
    const ticker = setInterval(() => {
      longestGap = Math.max(longestGap, performance.now() - last);
      last = performance.now();
    }, 10);
    try {
      await assert.rejects(parse(on, CATASTROPHIC, hostile, 1000), (error: unknown) => {
        assert.ok(error instanceof ParseStoppedError, String(error));
        assert.equal(error.message, 'parse took longer than 1 s (timeout_seconds)');
        return true;
      });
    } finally {
      clearInterval(ticker);
    }
    // On the event loop itself this document would hold it for many seconds (exponential in its length); a busy machine may pause it for a moment.
    assert.ok(longestGap < 5000, `the event loop stood still for ${Math.round(longestGap)} ms during the parse`);
    assert.deepEqual(values(await parse(on, CATASTROPHIC, matching)), { intl_fx_eurusd: '1.0823' });
  });

  it('refuses a parse past its heap with the reason, then parses the next document', async () => {
    // A thread's heap is 12 MB per MiB allowed, at least 32 MB; every node of 4 MiB of small objects, listed by `$..*`, needs far more.
    const on = pool(64 * 1024);
    assert.equal(on.heapMb, 32);
    const objects = Array.from({ length: 200_000 }, (_, i) => `{"s":"S${i}","v":${i}}`).join(',');
    assert.ok(objects.length > 4 * MiB, 'objects.length > 4 * MiB');
    await assert.rejects(parse(on, { format: 'mapping', items: { intl_fx_eurusd: '$..*' } }, `{"data":[${objects}]}`), (error: unknown) => {
      assert.ok(error instanceof ParseStoppedError, String(error));
      assert.equal(error.message, `parse needed more than ${on.heapMb} MB of memory`);
      return true;
    });
    assert.deepEqual(values(await parse(on, { format: 'mapping', items: { intl_fx_eurusd: '$.rate' } }, '{"rate":"1.0823"}')), { intl_fx_eurusd: '1.0823' });
  });

  it("refuses what the parser refuses as a format error with the parser's reason", async () => {
    const on = pool();
    const ecb = { format: 'ecb', items: { intl_fx_eurusd: 'USD' } } as const;
    const good = ecbXml('2026-11-20', { USD: '1.0823' });
    const entity = good.replace('<gesmes:Envelope', '<!DOCTYPE e [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n<gesmes:Envelope').replace("rate='1.0823'", "rate='&x;'");
    const deep = good.replace('</gesmes:Envelope>', `${'<a>'.repeat(10_000)}${'</a>'.repeat(10_000)}</gesmes:Envelope>`);
    const refusals: [FormatFields, string, string | RegExp][] = [
      [ecb, entity, 'invalid XML: External entities are not supported'],
      [ecb, deep, 'invalid XML: Maximum nested tags exceeded'],
      [ecb, '{"USD": 1.0823}', /^invalid XML \(line 1\)$/],
      [{ format: 'nerkh' }, '{"items":{"a":1}}}', /^invalid JSON: /],
      [{ format: 'mapping', items: { intl_fx_eurusd: '$.rate' } }, '{"rate":', /^invalid JSON( \(at character \d+\))?$/],
      [{ format: 'csv' }, 'intl_fx_eurusd,"1\n', /^invalid CSV \(CSV_QUOTE_NOT_CLOSED, line \d\)$/],
    ];
    for (const [fields, text, reason] of refusals) {
      await assert.rejects(parse(on, fields, text), (error: unknown) => {
        assert.ok(error instanceof SourceFormatError && !(error instanceof ParseStoppedError), `${fields.format}: ${String(error)}`);
        if (typeof reason === 'string') assert.equal(error.message, reason);
        else assert.match(error.message, reason);
        return true;
      });
    }
    // Well formed without a usable value: refused with what was dropped, as when parsed on the event loop.
    await assert.rejects(parse(on, { format: 'nerkh' }, '{"items":{"a":-1,"b":"x"}}'), (error: unknown) => error instanceof NoUsableValuesError && error.dropped === 2 && error.reasons.length === 2);
    assert.deepEqual(values(await parse(on, ecb, good)), { intl_fx_eurusd: '1.0823' });
  });
});

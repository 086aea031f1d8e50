import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sparkline } from '../../src/web/status-page.js';

describe('status page sparkline', () => {
  it('scales the series to the chart, oldest on the left', () => {
    const series = Array.from({ length: 36 }, (_, i) => (i === 35 ? 10 : i === 0 ? 5 : 0));
    const svg = sparkline(series);
    const points = /points="([^"]+)"/.exec(svg)![1]!.split(' ').map((p) => p.split(',').map(Number));
    assert.equal(points.length, 36);
    assert.deepEqual(points[0], [0, 14]);
    assert.deepEqual(points[35], [144, 2]);
    assert.deepEqual(points[10], [41.1, 26]);
    assert.match(svg, /aria-label="15 values served in the last 6 hours"/);
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { finishReasonOf } from '../../../src/api/stats/finish-reason.js';
import { ModelSeries } from '../../../src/api/stats/model-series.js';
import { cpuPercent, treeUsage } from '../../../src/api/stats/process-usage.js';
import { SeriesRing } from '../../../src/api/stats/series-ring.js';
import { nearestRank, WindowQuantiles } from '../../../src/api/stats/window-quantiles.js';
import { UsageLedger } from '../../../src/auth/usage-ledger.js';
import { openDatabase } from '../../../src/storage/sqlite-database.js';

describe('SeriesRing', () => {
  it('keeps the last `capacity` samples, oldest first, and answers a window by time', () => {
    const ring = new SeriesRing(4, ['a', 'b'] as const);
    for (let t = 1; t <= 6; t++) ring.push(t * 1000, { a: t, b: t % 2 === 0 ? t * 10 : null });
    expect(ring.size).toBe(4);
    expect(ring.since(0)).toEqual({ times: [3000, 4000, 5000, 6000], values: { a: [3, 4, 5, 6], b: [null, 40, null, 60] } });
    // After 4500: the samples at 5000 and 6000 only; the window's edge is exclusive.
    expect(ring.since(4500).times).toEqual([5000, 6000]);
    expect(ring.since(5000).times).toEqual([6000]);
    expect(ring.since(6000).times).toEqual([]);
    expect(ring.last('a')).toBe(6);
    expect(ring.last('b')).toBe(60);
  });

  it('answers nothing before its first sample, and a column left out is missing', () => {
    const ring = new SeriesRing(3, ['a', 'b'] as const);
    expect(ring.since(0)).toEqual({ times: [], values: { a: [], b: [] } });
    expect(ring.last('a')).toBeNull();
    ring.push(1, { a: 1 });
    expect(ring.since(0).values.b).toEqual([null]);
  });
});

describe('WindowQuantiles', () => {
  it('gives nearest-rank p50 and p95 of a window, then starts again', () => {
    const q = new WindowQuantiles();
    for (let v = 100; v >= 1; v--) q.add(v);
    expect(q.take()).toEqual({ p50: 50, p95: 95 });
    expect(q.take()).toEqual({ p50: null, p95: null });
    q.add(7);
    expect(q.take()).toEqual({ p50: 7, p95: 7 });
    expect(nearestRank([1, 2, 3, 4], 0.5)).toBe(2);
  });

  it('stays bounded past 1,024 values and still estimates from a fair sample', () => {
    const q = new WindowQuantiles();
    for (let i = 0; i < 50_000; i++) q.add(i % 1000);
    const { p50, p95 } = q.take();
    // Uniform over 0..999: the sample's quantiles are near 500 and 950.
    expect(p50).toBeGreaterThan(400);
    expect(p50).toBeLessThan(600);
    expect(p95).toBeGreaterThan(900);
    q.add(Number.NaN);
    expect(q.take().p50).toBeNull();
  });
});

describe('finishReasonOf', () => {
  it('reads the runtime\'s, OpenAI\'s, the Messages API\'s and the Responses API\'s answers', () => {
    expect(finishReasonOf({ text: '', finish_reason: 'length' })).toBe('length');
    expect(finishReasonOf({ choices: [{ finish_reason: 'tool_calls' }] })).toBe('tool_calls');
    expect(finishReasonOf({ stop_reason: 'end_turn' })).toBe('stop');
    expect(finishReasonOf({ stop_reason: 'max_tokens' })).toBe('length');
    expect(finishReasonOf({ object: 'response', status: 'incomplete' })).toBe('length');
    expect(finishReasonOf({ status: 'completed' })).toBeNull(); // not a Responses answer
    expect(finishReasonOf({ finish_reason: 'content_filter' })).toBe('other');
    expect(finishReasonOf({ data: [] })).toBeNull();
    expect(finishReasonOf(null)).toBeNull();
  });
});

describe('ModelSeries', () => {
  it('turns a window\'s counts into rates over the interval, latencies into quantiles, and starts again', () => {
    const s = new ModelSeries('m', 10);
    s.generated(7);
    s.answered({ ok: true, promptTokens: 10, uncountedTokens: 3, e2eMs: 120.123456, ttftMs: 20, tpotMs: 5, finishReason: 'stop' });
    s.answered({ ok: false, promptTokens: 0, uncountedTokens: 0, e2eMs: 3, ttftMs: null, tpotMs: null, finishReason: 'error' });
    s.sample(5000, 5, { inFlight: 2, queued: 1 }, [{ replica: 'm-0', cpuPercent: 12.345, rssBytes: 1024, gpuMemoryBytes: null, gpuUtilizationPercent: null }]);
    s.sample(10_000, 5, { inFlight: 0, queued: 0 }, []);
    const a = s.read(0);
    expect(a.timestamps).toEqual([5, 10]);
    expect(a.series.generated_tokens_per_s).toEqual([2, 0]);
    expect(a.series.prompt_tokens_per_s).toEqual([2, 0]);
    expect(a.series.requests_per_s).toEqual([0.4, 0]);
    expect(a.series.errors_per_s).toEqual([0.2, 0]);
    expect(a.series.in_flight).toEqual([2, 0]);
    expect(a.series.ttft_p50_ms).toEqual([20, null]);
    expect(a.series.e2e_p95_ms).toEqual([120.12, null]);
    expect(a.finish_reasons.stop).toEqual([1, 0]);
    expect(a.finish_reasons.error).toEqual([1, 0]);
    expect(a.replicas).toEqual([{ replica: 'm-0', timestamps: [5], series: { cpu_percent: [12.3], rss_bytes: [1024], gpu_memory_bytes: [null], gpu_utilization_percent: [null] } }]);
    // The JSON answer is the same data, and is rebuilt after the next sample.
    expect(JSON.parse(s.readJson(60))).toEqual(s.read(10_000 - 60_000));
    s.sample(15_000, 5, { inFlight: 0, queued: 0 }, []);
    expect(JSON.parse(s.readJson(60)).timestamps).toEqual([5, 10, 15]);
    expect(JSON.parse(s.readJson(6)).timestamps).toEqual([10, 15]);
  });

  it('forgets a replica not seen for the whole ring', () => {
    const s = new ModelSeries('m', 3);
    s.sample(1000, 1, { inFlight: 0, queued: 0 }, [{ replica: 'm-0', cpuPercent: 1, rssBytes: 1, gpuMemoryBytes: null, gpuUtilizationPercent: null }]);
    for (let t = 2; t <= 4; t++) s.sample(t * 1000, 1, { inFlight: 0, queued: 0 }, []);
    expect(s.read(0).replicas.map((r) => r.replica)).toEqual(['m-0']);
    s.sample(5000, 1, { inFlight: 0, queued: 0 }, []);
    expect(s.read(0).replicas).toEqual([]);
  });
});

describe('process tree usage from /proc', () => {
  it('reads this process: CPU ticks that grow with work, and its resident memory', () => {
    const before = treeUsage(process.pid)!;
    expect(before.rssBytes).toBeGreaterThan(10 * 1024 * 1024);
    let x = 0;
    const until = process.cpuUsage().user + 60_000;
    while (process.cpuUsage().user < until) x += Math.sqrt(x + 1);
    const after = treeUsage(process.pid)!;
    // 60 ms of CPU is six of /proc's 10 ms ticks.
    expect(after.cpuTicks).toBeGreaterThan(before.cpuTicks);
    expect(cpuPercent(before, after, 1)).toBeGreaterThan(0);
    expect(cpuPercent(after, before, 1)).toBe(0); // a child gone with its ticks: never negative
    expect(treeUsage(2 ** 22 + 1)).toBeNull();
  });
});

describe('usage buckets', () => {
  it('sums hours into UTC days, ISO weeks from Monday, and months', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'hangar-usage-'));
    try {
      const ledger = new UsageLedger(openDatabase(path.join(dir, 'db.sqlite')));
      // Sunday 2026-11-29 23:00, Monday 2026-11-30 00:00, Tuesday 2026-12-01 10:00 (UTC).
      for (const at of ['2026-11-29T23:30:00Z', '2026-11-30T00:10:00Z', '2026-12-01T10:00:00Z']) ledger.add(0, 'm', Date.parse(at), { requests: 1, completion_tokens: 10 });
      const buckets = (b: 'day' | 'week' | 'month') => ledger.summary({}, [], b).map((r) => [r.bucket, r.requests]);
      expect(buckets('day')).toEqual([['2026-11-29T00:00:00.000Z', 1], ['2026-11-30T00:00:00.000Z', 1], ['2026-12-01T00:00:00.000Z', 1]]);
      expect(buckets('week')).toEqual([['2026-11-23T00:00:00.000Z', 1], ['2026-11-30T00:00:00.000Z', 2]]);
      expect(buckets('month')).toEqual([['2026-11-01T00:00:00.000Z', 2], ['2026-12-01T00:00:00.000Z', 1]]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('nvidia-smi device rows', () => {
  it('reads each GPU, leaves out one whose memory it cannot read, and keeps a missing utilization as null', async () => {
    const { parseDeviceRows } = await import('../../../src/runtime/gpu-memory.js');
    const text = ['0, NVIDIA H100 80GB HBM3, 81559, 1024, 87', '1, NVIDIA A100-SXM4-40GB, 40960, [N/A], 3', '2, Tesla T4, 15360, 2048, [Not Supported]', '3, NVIDIA GeForce RTX 4090, D, 24564, 100, 0', ''].join('\n');
    expect(parseDeviceRows(text)).toEqual([
      { index: 0, name: 'NVIDIA H100 80GB HBM3', memoryTotalBytes: 81559 * 2 ** 20, memoryUsedBytes: 1024 * 2 ** 20, utilizationPercent: 87 },
      { index: 2, name: 'Tesla T4', memoryTotalBytes: 15360 * 2 ** 20, memoryUsedBytes: 2048 * 2 ** 20, utilizationPercent: null },
      { index: 3, name: 'NVIDIA GeForce RTX 4090, D', memoryTotalBytes: 24564 * 2 ** 20, memoryUsedBytes: 100 * 2 ** 20, utilizationPercent: 0 },
    ]);
    expect(parseDeviceRows('')).toEqual([]);
  });
});

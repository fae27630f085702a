import { useMemo } from 'react';
import type { EChartsCoreOption } from 'echarts/core';
import { Chart, timeLines } from '../components/chart';
import { ErrorBanner } from '../components/error-banner';
import { Tabs } from '../components/tabs';
import { Link } from '../router';
import { useFetch } from '../use-fetch';
import { usePolling } from './polling';
import type { SeriesAnswer } from './stats-types';

export const WINDOWS = [
  { key: '5m', label: '5 min' },
  { key: '15m', label: '15 min' },
  { key: '1h', label: '1 hour' },
] as const;

/** Each chart: its title, unit and the series' columns it draws (docs/monitoring.md, "Series"). */
const CHARTS: ReadonlyArray<{ name: string; title: string; unit: string; lines: ReadonlyArray<[column: string, label: string]> }> = [
  { name: 'tokens', title: 'Throughput', unit: 'tokens/s', lines: [['generated_tokens_per_s', 'generated'], ['prompt_tokens_per_s', 'prompt']] },
  { name: 'requests', title: 'Requests', unit: 'req/s', lines: [['requests_per_s', 'requests'], ['errors_per_s', 'errors']] },
  { name: 'queue', title: 'In flight and queued', unit: 'requests', lines: [['in_flight', 'in flight'], ['queued', 'queued']] },
  { name: 'ttft', title: 'Time to first token', unit: 'ms', lines: [['ttft_p50_ms', 'p50'], ['ttft_p95_ms', 'p95']] },
  { name: 'tpot', title: 'Time per output token', unit: 'ms', lines: [['tpot_p50_ms', 'p50'], ['tpot_p95_ms', 'p95']] },
  { name: 'e2e', title: 'End-to-end latency', unit: 'ms', lines: [['e2e_p50_ms', 'p50'], ['e2e_p95_ms', 'p95']] },
];

/** Per replica: each chart draws one line per replica. */
const REPLICA_CHARTS: ReadonlyArray<{ name: string; title: string; unit: string; column: string; scale?: number }> = [
  { name: 'cpu', title: 'CPU (100 = one core)', unit: '%', column: 'cpu_percent' },
  { name: 'rss', title: 'Resident memory', unit: 'MiB', column: 'rss_bytes', scale: 2 ** 20 },
  { name: 'gpu-memory', title: 'GPU memory', unit: 'MiB', column: 'gpu_memory_bytes', scale: 2 ** 20 },
  { name: 'gpu-utilization', title: 'GPU utilization', unit: '%', column: 'gpu_utilization_percent' },
];

/** One model's charts over 5 min, 15 min or 1 h, reloaded at every sample. */
export function ModelStatsPage({ uid, window }: { uid: string; window: string }) {
  const chosen = WINDOWS.some((w) => w.key === window) ? window : '15m';
  const series = useFetch<SeriesAnswer>(`/v1/stats/models/${encodeURIComponent(uid)}/series?window=${chosen}`, { keepOnError: true });
  usePolling(series.reload, series.data?.interval_s ?? 5, series.error);
  const s = series.data;
  const options = useMemo(() => (s ? chartOptions(s) : []), [s]);

  return (
    <section data-window={s?.window_s}>
      <p>
        <Link to="/ui/dashboard">← Overview</Link>
      </p>
      <h1>
        {uid} {s?.model_name && <span className="muted">({s.model_name})</span>}
      </h1>
      <Tabs label="Window" current={chosen} items={WINDOWS.map((w) => ({ key: w.key, label: w.label, to: `/ui/dashboard/models/${encodeURIComponent(uid)}?window=${w.key}` }))} />
      <ErrorBanner error={series.error} />
      {s && (
        <>
          <p className="muted">
            A sample every {s.interval_s} s; {s.timestamps.length} in this window.
          </p>
          <div className="chart-grid">
            {options.map((c) => (
              <figure key={c.name}>
                <figcaption>{c.title}</figcaption>
                <Chart name={c.name} label={`${c.title}, last ${chosen}`} option={c.option} />
              </figure>
            ))}
          </div>
        </>
      )}
    </section>
  );
}

function chartOptions(s: SeriesAnswer): Array<{ name: string; title: string; option: EChartsCoreOption }> {
  const out = CHARTS.map((c) => ({
    name: c.name,
    title: c.title,
    option: timeLines(s.timestamps, c.lines.map(([column, label]) => ({ name: label, values: s.series[column] ?? [] })), c.unit),
  }));
  out.push({
    name: 'finish',
    title: 'Finish reasons per sample',
    option: timeLines(
      s.timestamps,
      Object.entries(s.finish_reasons)
        .filter(([, values]) => values.some((v) => (v ?? 0) > 0))
        .map(([reason, values]) => ({ name: reason, values, stack: 'finish', area: true })),
      'requests',
    ),
  });
  for (const c of REPLICA_CHARTS) {
    // GPU charts only where some replica has a GPU reading.
    if (!s.replicas.some((r) => (r.series[c.column] ?? []).some((v) => v !== null))) continue;
    const timestamps = [...new Set(s.replicas.flatMap((r) => r.timestamps))].sort((a, b) => a - b);
    const lines = s.replicas.map((r) => {
      const byTime = new Map(r.timestamps.map((t, i) => [t, r.series[c.column]?.[i] ?? null]));
      return { name: r.replica, values: timestamps.map((t) => scaled(byTime.get(t) ?? null, c.scale)) };
    });
    out.push({ name: `replica-${c.name}`, title: `${c.title}, per replica`, option: timeLines(timestamps, lines, c.unit) });
  }
  return out;
}

function scaled(v: number | null, by = 1): number | null {
  return v === null ? null : Math.round((v / by) * 10) / 10;
}

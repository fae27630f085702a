import { useMemo, useState } from 'react';
import { ApiError } from '../api/api-error';
import { Chart, formatNumber, sparkline } from '../components/chart';
import { ErrorBanner } from '../components/error-banner';
import { formatBytes } from '../components/memory-bars';
import { Link } from '../router';
import { useFetch } from '../use-fetch';
import { usePolling } from './polling';
import type { Overview, UsageSummaryRow } from './stats-types';
import { stackedTokens } from './usage-chart';

const DAY_MS = 86_400_000;

/**
 * The overview (docs/monitoring.md, "Dashboards"): cards, every running model with
 * sparklines of its throughput and queue, memory against the host's and each GPU's,
 * and the last 30 days' tokens by model and by user. Live: it reloads every sample.
 */
export function OverviewPage() {
  const overview = useFetch<Overview>('/v1/stats/overview', { keepOnError: true });
  usePolling(overview.reload, overview.data?.interval_s ?? 5, overview.error);
  // The 30 days are fixed when the page opens: a day's bars do not move while it is read.
  const [since] = useState(() => new Date(Math.floor((Date.now() - 29 * DAY_MS) / DAY_MS) * DAY_MS).toISOString());
  const byModel = useFetch<UsageSummaryRow[]>(`/v1/admin/usage?from=${encodeURIComponent(since)}&bucket=day&group_by=model`);
  const byUser = useFetch<UsageSummaryRow[]>(`/v1/admin/usage?from=${encodeURIComponent(since)}&bucket=day&group_by=user`);
  const [until] = useState(() => new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS + DAY_MS).toISOString());
  const modelOption = useMemo(() => stackedTokens(byModel.data ?? [], 'model', 'day', { from: since, to: until }), [byModel.data, since, until]);
  const userOption = useMemo(() => stackedTokens(byUser.data ?? [], 'user', 'day', { from: since, to: until }), [byUser.data, since, until]);
  const o = overview.data;

  return (
    <section>
      <h1>Overview</h1>
      <ErrorBanner error={overview.error} />
      {o && (
        <>
          <ul className="stat-cards" aria-label="Totals">
            <StatCard label="Models running" value={o.models} name="models" />
            <StatCard label="Replicas" value={o.replicas} name="replicas" />
            <StatCard label="Requests today" value={o.today.requests} name="requests-today" detail={o.today.errors ? `${o.today.errors} errors` : 'UTC day'} />
            <StatCard label="Tokens today" value={o.today.prompt_tokens + o.today.completion_tokens} name="tokens-today" detail={`${formatNumber(o.today.completion_tokens)} generated`} />
          </ul>

          <h2>Memory</h2>
          <div className="memory-bars">
            <MemoryMeter label="Host memory" used={o.memory.host.used_bytes} models={o.memory.host.models_bytes} total={o.memory.host.total_bytes} device="host" />
            {o.memory.gpus.map((g) => (
              <MemoryMeter key={g.index} label={`GPU ${g.index} ${g.name}`} used={g.used_bytes} models={g.models_bytes} total={g.total_bytes} device={`gpu${g.index}`} utilization={g.utilization_percent} />
            ))}
          </div>

          <h2>Running models</h2>
          {o.running.length === 0 ? (
            <p className="empty">No model is running.</p>
          ) : (
            <div className="table-wrap">
              <table className="running-stats">
                <thead>
                  <tr>
                    <th>Model</th>
                    <th>Replicas</th>
                    <th>Memory</th>
                    <th>Generated tokens/s, 5 min</th>
                    <th>Queued, 5 min</th>
                  </tr>
                </thead>
                <tbody>
                  {o.running.map((m) => (
                    <tr key={m.model_uid} data-model={m.model_uid}>
                      <td>
                        <Link to={`/ui/dashboard/models/${encodeURIComponent(m.model_uid)}`}>{m.model_uid}</Link>
                        <div className="muted">
                          {m.model_name} · {m.model_type} · {m.model_engine}
                        </div>
                      </td>
                      <td>{m.replicas}</td>
                      <td>{m.rss_bytes === null ? '–' : formatBytes(m.rss_bytes)}{m.gpu_memory_bytes !== null ? ` + ${formatBytes(m.gpu_memory_bytes)} GPU` : ''}</td>
                      <td className="spark">
                        <Chart name={`spark-tokens-${m.model_uid}`} label={`${m.model_uid} generated tokens per second`} height={40} option={sparkline(m.sparkline.timestamps, m.sparkline.generated_tokens_per_s)} />
                      </td>
                      <td className="spark">
                        <Chart name={`spark-queued-${m.model_uid}`} label={`${m.model_uid} queued requests`} height={40} option={sparkline(m.sparkline.timestamps, m.sparkline.queued)} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </>
      )}

      <h2>Tokens, last 30 days</h2>
      <UsageOrWhy error={byModel.error}>
        <div className="chart-grid">
          <figure>
            <figcaption>By model</figcaption>
            <Chart name="usage-30d-model" label="Tokens per day by model, last 30 days" option={modelOption} />
          </figure>
          <figure>
            <figcaption>By user</figcaption>
            <Chart name="usage-30d-user" label="Tokens per day by user, last 30 days" option={userOption} />
          </figure>
        </div>
      </UsageOrWhy>
    </section>
  );
}

function StatCard({ label, value, name, detail }: { label: string; value: number; name: string; detail?: string }) {
  return (
    <li className="stat-card" data-card={name}>
      <span className="muted">{label}</span>
      <strong data-value={value}>{formatNumber(value)}</strong>
      {detail && <span className="muted small">{detail}</span>}
    </li>
  );
}

function MemoryMeter({ label, used, models, total, device, utilization }: { label: string; used: number; models: number; total: number; device: string; utilization?: number | null }) {
  const pct = (n: number) => `${Math.min(100, (100 * n) / Math.max(total, 1))}%`;
  return (
    <div className="memory-device" data-device={device}>
      <div className="memory-label">
        <strong>{label}</strong>{' '}
        <span className="muted">
          {formatBytes(used)} of {formatBytes(total)} in use, {formatBytes(models)} by models{utilization !== undefined && utilization !== null ? `, ${utilization}% busy` : ''}
        </span>
      </div>
      <div className="bar stacked" role="meter" aria-label={`${label} in use`} aria-valuemin={0} aria-valuemax={total} aria-valuenow={used}>
        <div style={{ width: pct(Math.min(models, used)) }} title={`models: ${formatBytes(models)}`} />
        <div className="other" style={{ width: pct(Math.max(0, used - models)) }} title={`everything else: ${formatBytes(Math.max(0, used - models))}`} />
      </div>
    </div>
  );
}

/** Usage needs `keys:read`; without it the overview says so instead of failing. */
export function UsageOrWhy({ error, children }: { error: unknown; children: React.ReactNode }) {
  if (error instanceof ApiError && error.status === 403) return <p className="muted" data-testid="usage-forbidden">Usage over time needs the <code>keys:read</code> permission.</p>;
  if (error) return <ErrorBanner error={error} />;
  return <>{children}</>;
}

import { useMemo, useState } from 'react';
import { send } from '../api/client';
import { Chart, formatNumber } from '../components/chart';
import { ErrorBanner } from '../components/error-banner';
import { useFetch } from '../use-fetch';
import { UsageOrWhy } from './overview-page';
import type { UsageSummaryRow } from './stats-types';
import { stackedTokens, totalsByGroup, type UsageGroup } from './usage-chart';

const BUCKETS = ['hour', 'day', 'week', 'month'] as const;
const GROUPS: ReadonlyArray<{ key: UsageGroup; label: string }> = [
  { key: 'model', label: 'Model' },
  { key: 'user', label: 'User' },
  { key: 'key', label: 'API key' },
];
const DAY_MS = 86_400_000;

/** A date input's value (UTC), and the instant a range of whole UTC days starts or ends at. */
const isoDate = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const startOf = (date: string) => `${date}T00:00:00.000Z`;
const endOf = (date: string) => new Date(Date.parse(startOf(date)) + DAY_MS).toISOString();
/** A date input's value that names a real day (an input being edited may hold '' or a year like 20261). */
const validDate = (date: string) => /^\d{4}-\d{2}-\d{2}$/.test(date) && Number.isFinite(Date.parse(startOf(date)));

/**
 * Tokens over time, stacked by key, user or model, per hour, day, week or month, over
 * a range of UTC days; the same query as CSV or JSON. What a user sees is what
 * `GET /v1/admin/usage` lets them see: without `keys:manage`, their own keys only.
 */
export function UsagePage() {
  const [group, setGroup] = useState<UsageGroup>('model');
  const [bucket, setBucket] = useState<(typeof BUCKETS)[number]>('day');
  const [from, setFrom] = useState(() => isoDate(Date.now() - 6 * DAY_MS));
  const [to, setTo] = useState(() => isoDate(Date.now()));
  const [downloadError, setDownloadError] = useState<unknown>(null);
  const rangeOk = validDate(from) && validDate(to) && from <= to;
  const query = rangeOk ? `from=${encodeURIComponent(startOf(from))}&to=${encodeURIComponent(endOf(to))}&bucket=${bucket}&group_by=${group}` : null;
  const usage = useFetch<UsageSummaryRow[]>(query === null ? null : `/v1/admin/usage?${query}`);
  const rows = usage.data ?? [];
  const option = useMemo(() => stackedTokens(rows, group, bucket, rangeOk ? { from: startOf(from), to: endOf(to) } : undefined), [rows, group, bucket, rangeOk, from, to]);
  const totals = useMemo(() => totalsByGroup(rows, group), [rows, group]);
  const sum = totals.reduce((a, t) => ({ requests: a.requests + t.requests, prompt: a.prompt + t.prompt_tokens, completion: a.completion + t.completion_tokens, errors: a.errors + t.errors }), { requests: 0, prompt: 0, completion: 0, errors: 0 });

  const download = async (format: 'csv' | 'json') => {
    setDownloadError(null);
    if (query === null) return;
    try {
      // Through the API client: the credential is a header, which a plain link cannot carry.
      const response = await send(`/v1/admin/usage?${query}${format === 'csv' ? '&format=csv' : ''}`);
      const blob = format === 'csv' ? await response.blob() : new Blob([JSON.stringify(await response.json(), null, 2)], { type: 'application/json' });
      const link = document.createElement('a');
      link.href = URL.createObjectURL(blob);
      link.download = `usage-${from}-${to}-${bucket}-by-${group}.${format}`;
      link.click();
      setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
    } catch (e) {
      setDownloadError(e);
    }
  };

  return (
    <section>
      <h1>Usage</h1>
      <div className="filters">
        <div className="field">
          <label htmlFor="usage-group">Group by</label>
          <select id="usage-group" value={group} onChange={(e) => setGroup(e.target.value as UsageGroup)}>
            {GROUPS.map((g) => (
              <option key={g.key} value={g.key}>
                {g.label}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="usage-bucket">Per</label>
          <select id="usage-bucket" value={bucket} onChange={(e) => setBucket(e.target.value as (typeof BUCKETS)[number])}>
            {BUCKETS.map((b) => (
              <option key={b} value={b}>
                {b}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="usage-from">From (UTC)</label>
          <input id="usage-from" type="date" value={from} max={to} onChange={(e) => setFrom(e.target.value)} />
        </div>
        <div className="field">
          <label htmlFor="usage-to">To (UTC, included)</label>
          <input id="usage-to" type="date" value={to} min={from} onChange={(e) => setTo(e.target.value)} />
        </div>
      </div>
      {!rangeOk && (
        <p className="banner warn" role="status">
          Choose a start and an end date, the start not after the end.
        </p>
      )}
      <UsageOrWhy error={usage.error}>
        <Chart name="usage" label={`Tokens per ${bucket} by ${group}`} option={option} height={300} />
        <div className="actions">
          <button type="button" disabled={!rangeOk} onClick={() => void download('csv')}>
            Download CSV
          </button>
          <button type="button" disabled={!rangeOk} onClick={() => void download('json')}>
            Download JSON
          </button>
        </div>
        <ErrorBanner error={downloadError} />
        <div className="table-wrap">
          <table className="usage-totals">
            <thead>
              <tr>
                <th>{GROUPS.find((g) => g.key === group)!.label}</th>
                <th>Requests</th>
                <th>Prompt tokens</th>
                <th>Completion tokens</th>
                <th>Errors</th>
              </tr>
            </thead>
            <tbody>
              {totals.map((t) => (
                <tr key={t.name} data-group={t.name}>
                  <td>{t.name}</td>
                  <td>{formatNumber(t.requests)}</td>
                  <td>{formatNumber(t.prompt_tokens)}</td>
                  <td>{formatNumber(t.completion_tokens)}</td>
                  <td>{formatNumber(t.errors)}</td>
                </tr>
              ))}
            </tbody>
            <tfoot>
              <tr data-group="total">
                <th>Total</th>
                <td data-value={sum.requests}>{formatNumber(sum.requests)}</td>
                <td data-value={sum.prompt}>{formatNumber(sum.prompt)}</td>
                <td data-value={sum.completion}>{formatNumber(sum.completion)}</td>
                <td data-value={sum.errors}>{formatNumber(sum.errors)}</td>
              </tr>
            </tfoot>
          </table>
        </div>
        {rows.length === 0 && !usage.loading && <p className="empty">No usage in this range.</p>}
      </UsageOrWhy>
    </section>
  );
}

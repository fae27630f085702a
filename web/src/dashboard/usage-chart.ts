import type { EChartsCoreOption } from 'echarts/core';
import { formatNumber, TOOLTIP } from '../components/chart';
import type { UsageSummaryRow } from './stats-types';

export type UsageGroup = 'key' | 'user' | 'model';

/** How a summary row's group is shown: a key by id (`anonymous` for requests without one), a user, a model. */
export function groupName(row: UsageSummaryRow, group: UsageGroup): string {
  if (group === 'key') return row.key_id === null || row.key_id === undefined ? 'anonymous' : `key ${row.key_id}`;
  if (group === 'user') return row.user ?? '(none)';
  return row.model ?? '(none)';
}

/** A bucket's start as a label: the hour for hourly buckets, the date otherwise (UTC, as stored). */
export function bucketLabel(bucket: string, size: string): string {
  return size === 'hour' ? `${bucket.slice(0, 10)} ${bucket.slice(11, 16)}` : size === 'month' ? bucket.slice(0, 7) : bucket.slice(0, 10);
}

/**
 * Every bucket's start in [from, to) as the API writes it (`2026-11-27T07:00:00.000Z`):
 * hours, UTC days, ISO weeks from Monday, months. Bounded: at most 2,000 buckets.
 */
export function bucketsBetween(from: string, to: string, size: string): string[] {
  const start = new Date(from);
  const end = Date.parse(to);
  if (size === 'hour') start.setUTCMinutes(0, 0, 0);
  else start.setUTCHours(0, 0, 0, 0);
  if (size === 'week') start.setUTCDate(start.getUTCDate() - ((start.getUTCDay() + 6) % 7));
  if (size === 'month') start.setUTCDate(1);
  const out: string[] = [];
  for (const at = start; at.getTime() < end && out.length < 2000; ) {
    out.push(at.toISOString());
    if (size === 'hour') at.setUTCHours(at.getUTCHours() + 1);
    else if (size === 'day') at.setUTCDate(at.getUTCDate() + 1);
    else if (size === 'week') at.setUTCDate(at.getUTCDate() + 7);
    else at.setUTCMonth(at.getUTCMonth() + 1);
  }
  return out;
}

/**
 * Tokens (prompt + completion) per bucket, one stacked bar series per group. With a
 * range, every bucket of it is on the axis (a quiet day shows as a gap, not as nothing).
 */
export function stackedTokens(rows: UsageSummaryRow[], group: UsageGroup, size: string, range?: { from: string; to: string }): EChartsCoreOption {
  const buckets = [...new Set([...(range ? bucketsBetween(range.from, range.to, size) : []), ...rows.map((r) => r.bucket)])].sort();
  const index = new Map(buckets.map((b, i) => [b, i]));
  const groups = new Map<string, number[]>();
  for (const row of rows) {
    const name = groupName(row, group);
    let data = groups.get(name);
    if (!data) groups.set(name, (data = buckets.map(() => 0)));
    data[index.get(row.bucket)!]! += row.prompt_tokens + row.completion_tokens;
  }
  return {
    animation: false,
    grid: { left: 64, right: 16, top: 36, bottom: 28 },
    legend: { top: 0, type: 'scroll' },
    tooltip: { ...TOOLTIP, trigger: 'axis', axisPointer: { type: 'shadow' }, valueFormatter: (v: unknown) => (typeof v === 'number' ? `${formatNumber(v)} tokens` : '–') },
    xAxis: { type: 'category', data: buckets.map((b) => bucketLabel(b, size)) },
    yAxis: { type: 'value', name: 'tokens', nameGap: 8 },
    series: [...groups].sort(([a], [b]) => a.localeCompare(b)).map(([name, data]) => ({ name, type: 'bar', stack: 'tokens', data })),
  };
}

/** Totals per group over all buckets, largest first. */
export function totalsByGroup(rows: UsageSummaryRow[], group: UsageGroup): Array<{ name: string; requests: number; prompt_tokens: number; completion_tokens: number; errors: number }> {
  const totals = new Map<string, { name: string; requests: number; prompt_tokens: number; completion_tokens: number; errors: number }>();
  for (const row of rows) {
    const name = groupName(row, group);
    const t = totals.get(name) ?? { name, requests: 0, prompt_tokens: 0, completion_tokens: 0, errors: 0 };
    t.requests += row.requests;
    t.prompt_tokens += row.prompt_tokens;
    t.completion_tokens += row.completion_tokens;
    t.errors += row.errors;
    totals.set(name, t);
  }
  return [...totals.values()].sort((a, b) => b.prompt_tokens + b.completion_tokens - (a.prompt_tokens + a.completion_tokens));
}

/** How often the service samples its models' series, and for how long it keeps them (docs/monitoring.md, "Series"). */
export interface StatsSettings {
  intervalMs: number;
  retentionMs: number;
}

/** Issue 41: a sample every 5 s over the last hour. */
export const DEFAULT_STATS: StatsSettings = { intervalMs: 5000, retentionMs: 3_600_000 };

/**
 * `HANGAR_STATS_INTERVAL_S` (1–60, default 5) sets the sample period; the last hour is
 * kept whatever it is, so a shorter period costs more memory (3,600 samples a series at 1 s).
 * A value outside the range is refused at start rather than silently replaced.
 */
export function statsSettings(env: Record<string, string | undefined> = process.env): StatsSettings {
  const raw = env.HANGAR_STATS_INTERVAL_S?.trim();
  if (!raw) return DEFAULT_STATS;
  const seconds = Number(raw);
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > 60) {
    throw new Error(`HANGAR_STATS_INTERVAL_S must be a whole number of seconds from 1 to 60, not ${JSON.stringify(raw)}`);
  }
  return { ...DEFAULT_STATS, intervalMs: seconds * 1000 };
}

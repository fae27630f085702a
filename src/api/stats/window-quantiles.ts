/** Values kept per window and measure: beyond it a uniform sample stands for them all. */
const KEPT = 1024;

/**
 * The values of one measure (time to first token, say) seen in one sample window, for
 * its p50 and p95. Bounded whatever the load: past `KEPT` values it keeps a uniform
 * reservoir sample (Vitter's algorithm R), so a 5 s window of 10,000 requests costs the
 * same memory as one of 1,024 and its quantiles are estimated from a fair sample.
 */
export class WindowQuantiles {
  private readonly values = new Float64Array(KEPT);
  private seen = 0;

  add(value: number): void {
    if (!Number.isFinite(value)) return;
    if (this.seen < KEPT) this.values[this.seen] = value;
    else {
      const j = Math.floor(Math.random() * (this.seen + 1));
      if (j < KEPT) this.values[j] = value;
    }
    this.seen++;
  }

  /** p50 and p95 of the window (nearest rank), null for an empty window; then starts the next window. */
  take(): { p50: number | null; p95: number | null } {
    const n = Math.min(this.seen, KEPT);
    this.seen = 0;
    if (n === 0) return { p50: null, p95: null };
    const sorted = this.values.subarray(0, n).sort();
    return { p50: nearestRank(sorted, 0.5), p95: nearestRank(sorted, 0.95) };
  }
}

/** The nearest-rank quantile: the smallest value with at least q of the values at or below it. */
export function nearestRank(sorted: Float64Array | readonly number[], q: number): number {
  const rank = Math.max(1, Math.ceil(q * sorted.length));
  return sorted[rank - 1]!;
}

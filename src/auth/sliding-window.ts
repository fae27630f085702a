/**
 * Amounts added over the last minute, kept in 60 one-second buckets: a sliding window
 * with one-second resolution, so a limit cannot be doubled by straddling a window
 * boundary (what a fixed per-minute window allows), at a fixed 60 numbers per key.
 * The running sum is kept as buckets come and go, so the request path costs O(1)
 * (amortised: a bucket is dropped once).
 */
export const WINDOW_MS = 60_000;
const BUCKETS = 60;
const BUCKET_MS = WINDOW_MS / BUCKETS;

export class SlidingWindow {
  private readonly amounts = new Float64Array(BUCKETS);
  /** The oldest second still counted in `sum` (buckets before it are zero). */
  private oldest = 0;
  /** The newest second anything was added in. */
  private newest = -Infinity;
  private sum = 0;

  add(amount: number, nowMs: number): void {
    const second = this.advance(nowMs);
    this.amounts[second % BUCKETS] = this.amounts[second % BUCKETS]! + amount;
    this.sum += amount;
    if (amount > 0) this.newest = second;
  }

  /** The sum over the last minute. */
  total(nowMs: number): number {
    this.advance(nowMs);
    return this.sum;
  }

  /** Milliseconds until everything in the window has left it (0 if empty). */
  msUntilEmpty(nowMs: number): number {
    this.advance(nowMs);
    return this.sum <= 0 ? 0 : Math.max(0, (this.newest + BUCKETS) * BUCKET_MS - nowMs);
  }

  /**
   * Milliseconds until the total has fallen to `target` or below (0 if it already
   * has): buckets leave the window oldest first.
   */
  msUntilAtMost(target: number, nowMs: number): number {
    const nowSecond = this.advance(nowMs);
    let remaining = this.sum;
    for (let second = this.oldest; second <= nowSecond && remaining > target; second++) {
      remaining -= this.amounts[second % BUCKETS]!;
      if (remaining <= target) return Math.max(0, (second + BUCKETS) * BUCKET_MS - nowMs);
    }
    return 0;
  }

  /** Drops the buckets that have left the window; answers the current second. */
  private advance(nowMs: number): number {
    const second = Math.floor(nowMs / BUCKET_MS);
    const first = second - BUCKETS + 1;
    if (first > this.oldest) {
      if (first - this.oldest >= BUCKETS) {
        this.amounts.fill(0);
        this.sum = 0;
      } else {
        for (let s = this.oldest; s < first; s++) {
          this.sum -= this.amounts[s % BUCKETS]!;
          this.amounts[s % BUCKETS] = 0;
        }
      }
      this.oldest = first;
    }
    return second;
  }
}

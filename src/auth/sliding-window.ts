/**
 * Amounts added over the last minute, kept in 60 one-second buckets: a sliding window
 * with one-second resolution, so a limit cannot be doubled by straddling a window
 * boundary (what a fixed per-minute window allows), at a fixed 60 numbers per key.
 */
export const WINDOW_MS = 60_000;
const BUCKETS = 60;
const BUCKET_MS = WINDOW_MS / BUCKETS;

export class SlidingWindow {
  private readonly seconds = new Float64Array(BUCKETS).fill(-Infinity);
  private readonly amounts = new Float64Array(BUCKETS);

  add(amount: number, nowMs: number): void {
    const second = Math.floor(nowMs / BUCKET_MS);
    const slot = second % BUCKETS;
    if (this.seconds[slot] !== second) {
      this.seconds[slot] = second;
      this.amounts[slot] = 0;
    }
    this.amounts[slot] = this.amounts[slot]! + amount;
  }

  /** The sum over the last minute. */
  total(nowMs: number): number {
    const oldest = Math.floor(nowMs / BUCKET_MS) - BUCKETS + 1;
    let sum = 0;
    for (let i = 0; i < BUCKETS; i++) if (this.seconds[i]! >= oldest) sum += this.amounts[i]!;
    return sum;
  }

  /**
   * Milliseconds until the total has fallen to `target` or below (0 if it already
   * has): buckets leave the window oldest first.
   */
  msUntilAtMost(target: number, nowMs: number): number {
    const nowSecond = Math.floor(nowMs / BUCKET_MS);
    const live: Array<[number, number]> = [];
    for (let i = 0; i < BUCKETS; i++) {
      if (this.seconds[i]! > nowSecond - BUCKETS && this.amounts[i]! > 0) live.push([this.seconds[i]!, this.amounts[i]!]);
    }
    live.sort((a, b) => a[0] - b[0]);
    let remaining = live.reduce((sum, [, amount]) => sum + amount, 0);
    for (const [second, amount] of live) {
      if (remaining <= target) break;
      remaining -= amount;
      if (remaining <= target) return Math.max(0, (second + BUCKETS) * BUCKET_MS - nowMs);
    }
    return 0;
  }
}

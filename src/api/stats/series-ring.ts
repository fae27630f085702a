/**
 * A fixed number of samples of a fixed set of columns, oldest overwritten first: the
 * memory of a model's series is decided when the ring is made, however long the
 * model runs (issue 41: a bounded ring per series). A missing value is NaN inside and
 * null outside (JSON has no NaN).
 */
export class SeriesRing<Column extends string> {
  private readonly times: Float64Array;
  private readonly data: Record<Column, Float64Array>;
  /** Where the next sample goes. */
  private next = 0;
  private count = 0;

  constructor(
    readonly capacity: number,
    readonly columns: readonly Column[],
  ) {
    this.times = new Float64Array(capacity);
    this.data = Object.fromEntries(columns.map((c) => [c, new Float64Array(capacity)])) as Record<Column, Float64Array>;
  }

  get size(): number {
    return this.count;
  }

  /** One sample at `timeMs`; a column left out (or null) is missing for this sample. */
  push(timeMs: number, values: Partial<Record<Column, number | null>>): void {
    const i = this.next;
    this.times[i] = timeMs;
    for (const c of this.columns) {
      const v = values[c];
      this.data[c][i] = v === null || v === undefined ? Number.NaN : v;
    }
    this.next = (i + 1) % this.capacity;
    if (this.count < this.capacity) this.count++;
  }

  /** The last sample's value of a column; null when there is none or it is missing. */
  last(column: Column): number | null {
    if (this.count === 0) return null;
    const v = this.data[column][(this.next - 1 + this.capacity) % this.capacity]!;
    return Number.isNaN(v) ? null : v;
  }

  /**
   * The samples taken after `sinceMs`, oldest first, as columns (what charting
   * libraries draw from): times in `times`, each column's values beside them.
   */
  since(sinceMs: number, columns: readonly Column[] = this.columns): { times: number[]; values: Record<Column, Array<number | null>> } {
    const start = this.firstAfter(sinceMs);
    const n = this.count - start;
    const oldest = (this.next - this.count + this.capacity) % this.capacity;
    const times = new Array<number>(n);
    const values = {} as Record<Column, Array<number | null>>;
    for (const c of columns) values[c] = new Array<number | null>(n);
    for (let k = 0; k < n; k++) {
      const i = (oldest + start + k) % this.capacity;
      times[k] = this.times[i]!;
      for (const c of columns) {
        const v = this.data[c][i]!;
        values[c][k] = Number.isNaN(v) ? null : v;
      }
    }
    return { times, values };
  }

  /** Position (0 = oldest) of the first sample after `sinceMs`: a binary search, times only grow. */
  private firstAfter(sinceMs: number): number {
    const oldest = (this.next - this.count + this.capacity) % this.capacity;
    let lo = 0;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.times[(oldest + mid) % this.capacity]! > sinceMs) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}

/**
 * A stream's chunks as they arrive from the runtime. The producer pushes, then ends
 * or fails; the consumer may stop early, which calls `onReturn` (used to abort the
 * generation in the runtime).
 *
 * Two ways to read: as an async iterator (one chunk per `next()`), or with
 * `nextBatch()`, which hands over everything that has arrived since the last read
 * in one array: the token relay reads that way, so a reader that fell behind gets
 * what queued up at once and one promise settles per engine step, not per token.
 * A producer that delivers many chunks at once (one BATCH frame) calls `push` for
 * each, then `wake()` once.
 */
export class ChunkQueue<T> implements AsyncIterableIterator<T> {
  private items: T[] = [];
  private waiter: { resolve: (r: IteratorResult<T>) => void; reject: (e: unknown) => void } | null = null;
  private batchWaiter: { resolve: (items: T[]) => void; reject: (e: unknown) => void } | null = null;
  private done = false;
  private failure: unknown = null;

  constructor(private readonly onReturn: () => void = () => {}) {}

  /** Queues a chunk and hands it to a waiting reader at once. */
  push(item: T): void {
    this.pushQuietly(item);
    this.wake();
  }

  /** Queues a chunk; the producer calls `wake()` when its frame is done. */
  pushQuietly(item: T): void {
    if (!this.done) this.items.push(item);
  }

  /** Hands what has queued up to a waiting reader. */
  wake(): void {
    if (this.items.length === 0) return;
    if (this.batchWaiter) {
      const w = this.batchWaiter;
      this.batchWaiter = null;
      w.resolve(this.takeAll());
    } else if (this.waiter) {
      const w = this.waiter;
      this.waiter = null;
      w.resolve({ value: this.items.shift() as T, done: false });
    }
  }

  end(): void {
    this.finish(null);
  }

  fail(error: unknown): void {
    this.finish(error);
  }

  private finish(error: unknown): void {
    if (this.done) return;
    this.done = true;
    this.failure = error;
    // Chunks still queued go to the reader first; the end (or failure) follows them.
    if (this.items.length > 0) {
      this.wake();
      if (this.items.length > 0) return;
    }
    if (this.batchWaiter) {
      const w = this.batchWaiter;
      this.batchWaiter = null;
      if (error) w.reject(error);
      else w.resolve([]);
    }
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = null;
      if (error) w.reject(error);
      else w.resolve({ value: undefined, done: true });
    }
  }

  next(): Promise<IteratorResult<T>> {
    if (this.items.length > 0) return Promise.resolve({ value: this.items.shift() as T, done: false });
    if (this.done) {
      return this.failure ? Promise.reject(this.failure) : Promise.resolve({ value: undefined, done: true });
    }
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  /** Every chunk queued since the last read, waiting for one if none is; `[]` once the stream has ended. */
  nextBatch(): Promise<T[]> {
    if (this.items.length > 0) return Promise.resolve(this.takeAll());
    if (this.done) return this.failure ? Promise.reject(this.failure) : Promise.resolve([]);
    return new Promise((resolve, reject) => {
      this.batchWaiter = { resolve, reject };
    });
  }

  /** The stream ended normally and every chunk has been read. */
  get ended(): boolean {
    return this.done && this.items.length === 0 && !this.failure;
  }

  /** What has queued up, without waiting (possibly nothing). */
  takeQueued(): T[] {
    return this.items.length > 0 ? this.takeAll() : [];
  }

  private takeAll(): T[] {
    const all = this.items;
    this.items = [];
    return all;
  }

  return(): Promise<IteratorResult<T>> {
    if (!this.done) {
      this.done = true;
      this.items = [];
      // A read in progress (the relay waiting for the next step) ends with the stream.
      this.batchWaiter?.resolve([]);
      this.waiter?.resolve({ value: undefined, done: true });
      this.batchWaiter = this.waiter = null;
      this.onReturn();
    }
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }
}

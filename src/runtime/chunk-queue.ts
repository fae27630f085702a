/**
 * A stream's chunks as they arrive from the runtime, read as an async iterator.
 * The producer pushes, then ends or fails; the consumer may stop early, which calls
 * `onReturn` (used to abort the generation in the runtime).
 */
export class ChunkQueue<T> implements AsyncIterableIterator<T> {
  private readonly items: T[] = [];
  private waiter: { resolve: (r: IteratorResult<T>) => void; reject: (e: unknown) => void } | null = null;
  private done = false;
  private failure: unknown = null;

  constructor(private readonly onReturn: () => void = () => {}) {}

  push(item: T): void {
    if (this.done) return;
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = null;
      w.resolve({ value: item, done: false });
    } else {
      this.items.push(item);
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

  return(): Promise<IteratorResult<T>> {
    if (!this.done) {
      this.done = true;
      this.items.length = 0;
      this.onReturn();
    }
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }
}

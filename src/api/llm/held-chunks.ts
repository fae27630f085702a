import { asGeneration } from './generate-config.js';
import { mergeGenerations } from './generation-merge.js';
import type { StreamFormat } from './stream-format.js';

/** Chunks read and not yet written: all of them, or, with an interval, until enough tokens are in. */
export class HeldChunks {
  private values: unknown[] = [];
  private tokens = 0;
  private finishing = false;

  constructor(private readonly interval: number) {}

  add(values: readonly unknown[]): void {
    for (const value of values) {
      this.values.push(value);
      const g = value as { text?: unknown; reasoning_content?: unknown; finish_reason?: unknown } | null;
      if (g?.text || g?.reasoning_content) this.tokens++;
      if (g?.finish_reason) this.finishing = true;
    }
  }

  /** The events to write now; `merge` writes everything held as one event. */
  events(format: StreamFormat, merge: boolean): string {
    if (!merge && this.interval > 1 && !this.finishing && this.tokens < this.interval) return '';
    return this.rest(format, merge);
  }

  /** Everything held: merged into one event when merging or spacing, else one event each. */
  rest(format: StreamFormat, merge: boolean): string {
    if (this.values.length === 0) return '';
    const events = merge || this.interval > 1 ? format.events(mergeGenerations(this.values)) : this.values.map((v) => format.events(asGeneration(v))).join('');
    this.clear();
    return events;
  }

  private clear(): void {
    this.values = [];
    this.tokens = 0;
    this.finishing = false;
  }
}

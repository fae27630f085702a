import type { LlamaContext, LlamaContextSequence } from 'node-llama-cpp';
import { CallAborted } from '../invalid-input.js';

/**
 * The context's sequences, one per running call. A call that finds none free waits
 * its turn (arrival order); an ABORT while it waits ends the wait. Sequences keep
 * their cache between calls, so a returning conversation finds its prefix.
 */
export class SequencePool {
  private readonly free: LlamaContextSequence[] = [];
  private readonly waiting: Array<{ resolve: (s: LlamaContextSequence) => void; reject: (e: Error) => void; signal: AbortSignal; onAbort: () => void }> = [];
  private held = 0;

  constructor(context: LlamaContext) {
    for (let i = 0; i < context.totalSequences; i++) this.free.push(context.getSequence());
  }

  /** Calls that hold a sequence now. */
  get running(): number {
    return this.held;
  }

  acquire(signal: AbortSignal): Promise<LlamaContextSequence> {
    if (signal.aborted) return Promise.reject(new CallAborted());
    const sequence = this.free.pop();
    if (sequence) {
      this.held++;
      return Promise.resolve(sequence);
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        resolve,
        reject,
        signal,
        onAbort: () => {
          const at = this.waiting.indexOf(waiter);
          if (at >= 0) this.waiting.splice(at, 1);
          reject(new CallAborted());
        },
      };
      signal.addEventListener('abort', waiter.onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  release(sequence: LlamaContextSequence): void {
    const next = this.waiting.shift();
    if (next) {
      next.signal.removeEventListener('abort', next.onAbort);
      next.resolve(sequence);
      return;
    }
    this.held--;
    this.free.push(sequence);
  }
}

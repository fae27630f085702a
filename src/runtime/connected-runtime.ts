import type { ChunkQueue } from './chunk-queue.js';
import type { RuntimeConnection } from './runtime-connection.js';
import type { CallOptions, ReadyInfo, Runtime, RuntimeStats } from './runtime.js';

/**
 * What every launcher's runtime answers from its connection alone: calls, streams,
 * death, stats. A launcher adds how its process is named (`pid`) and stopped.
 */
export abstract class ConnectedRuntime implements Runtime {
  constructor(
    readonly replicaUid: string,
    protected readonly connection: RuntimeConnection,
    readonly ready: ReadyInfo,
  ) {}

  abstract get pid(): number;

  abstract terminate(): Promise<void>;

  abstract get address(): string;

  get stats(): RuntimeStats | null {
    return this.connection.stats;
  }

  get pendingCalls(): number {
    return this.connection.pendingCalls;
  }

  get dead(): boolean {
    return this.connection.isDead;
  }

  call(method: string, args: unknown[], kwargs: Record<string, unknown>, options: CallOptions = {}): Promise<unknown> {
    return this.connection.call(method, args, kwargs, options.signal);
  }

  stream(method: string, args: unknown[], kwargs: Record<string, unknown>): ChunkQueue<unknown> {
    return this.connection.stream(method, args, kwargs);
  }

  onDeath(listener: (reason: string, output: string) => void): void {
    this.connection.onDeath(listener);
  }
}

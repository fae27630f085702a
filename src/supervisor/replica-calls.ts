import { HangarError } from '../errors/hangar-error.js';
import type { ChunkQueue } from '../runtime/chunk-queue.js';
import { splitLastOutput } from '../runtime/runtime-failure.js';
import type { ModelType } from '../registry/index.js';
import { callFailure } from './failure-mapping.js';
import type { ModelInstance } from './model-instance.js';
import type { Replica } from './replica.js';

export interface CallTarget {
  uid: string;
  /** The route asking, for error messages (e.g. `/v1/flexible/infers`). */
  route: string;
  /** Model types the route serves. */
  types: readonly ModelType[];
}

export interface CallResult {
  value: unknown;
  /** The replica that answered (`<uid>-<n>`). */
  replica: string;
  /** Time spent waiting for the runtime, so the HTTP layer can report its own overhead. */
  runtimeMs: number;
}

/** 400 where a route serves other model types than the model's (also an on-demand entry's, before it loads). */
export function refuseOtherType(uid: string, type: ModelType, route: string, types: readonly ModelType[]): void {
  if (!types.includes(type)) throw new HangarError('wrong_model_type', [uid, type, route, types.join(' or ')], { param: 'model' });
}

/** The instance a call may go to: the right type, and ready. */
export function checkCallable(instance: ModelInstance, target: CallTarget): void {
  refuseOtherType(target.uid, instance.resolved.modelType, target.route, target.types);
  // Asleep (vLLM sleep mode): a request's lease wakes it first (on-demand.ts); a call without one waits its turn.
  if (instance.state === 'CREATING' || instance.asleep) {
    throw new HangarError('model_loading', [target.uid], { headers: { 'retry-after': '5' } });
  }
  // A launch that failed or was cancelled is not coming back: not found, as Xinference
  // answers for a model not running, not a 503 that invites retries. Its record stays
  // readable (GET /v1/models/{uid}, failed-launches.ts).
  if (instance.launchFailedAt !== null) {
    throw new HangarError('model_not_found', [`${target.uid} (its launch failed: ${instance.errorMessage ?? 'unknown error'})`], { param: 'model' });
  }
  if (instance.state !== 'READY') {
    // Never the runtime's last lines (tracebacks, paths, pids): the operator's, in the events and the log.
    throw new HangarError('runtime_unavailable', [target.uid, splitLastOutput(instance.errorMessage ?? instance.state.toLowerCase()).reason]);
  }
}

/** Round robin over ready replicas, honouring `request_limits` (429 when every replica is full). */
function takeReplica(instance: ModelInstance): Replica & { runtime: NonNullable<Replica['runtime']> } {
  const limit = instance.request.request_limits ?? null;
  const replica = instance.pickReplica(limit);
  if (!replica?.runtime) {
    if (limit !== null && instance.replicas.some((r) => r.status === 'READY')) throw new HangarError('request_limit_reached', [limit, instance.uid], { headers: { 'retry-after': '1' } });
    const restartAt = Math.min(...instance.replicas.map((r) => r.restartAt ?? (r.status === 'CREATING' ? Date.now() + 1000 : Infinity)));
    if (Number.isFinite(restartAt)) {
      const seconds = Math.max(1, Math.ceil((restartAt - Date.now()) / 1000));
      throw new HangarError('runtime_unavailable', [instance.uid, 'its replicas are restarting'], { headers: { 'retry-after': String(seconds) } });
    }
    throw new HangarError('runtime_unavailable', [instance.uid, 'no replica is ready']);
  }
  replica.inFlight++;
  return replica as Replica & { runtime: NonNullable<Replica['runtime']> };
}

export async function callReplica(
  instance: ModelInstance,
  target: CallTarget,
  method: string,
  args: unknown[],
  kwargs: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<CallResult> {
  const replica = takeReplica(instance);
  const started = performance.now();
  try {
    const value = await replica.runtime.call(method, args, kwargs, signal ? { signal } : {});
    return { value, replica: replica.uid, runtimeMs: performance.now() - started };
  } catch (err) {
    const error = callFailure(instance, err);
    // Stopped by its caller (the client went away, or the abort route): nothing failed.
    if (!signal?.aborted) instance.events.addCallFailure(`${target.route}: ${error.message}`);
    throw error;
  } finally {
    replica.inFlight--;
  }
}

/**
 * A streaming call: chunks as the runtime sends them, failures mapped to HangarErrors.
 * The replica's in-flight count is held until the stream ends, fails, or the reader
 * stops it with `return()` — which also aborts the generation in the runtime, even if
 * the reader never asked for a first chunk.
 */
export class CallStream implements AsyncIterableIterator<unknown> {
  readonly replica: string;
  private readonly chunks: ChunkQueue<unknown>;
  private released = false;
  private readonly release: () => void;

  constructor(
    private readonly instance: ModelInstance,
    private readonly target: CallTarget,
    method: string,
    args: unknown[],
    kwargs: Record<string, unknown>,
  ) {
    const replica = takeReplica(instance);
    this.replica = replica.uid;
    this.chunks = replica.runtime.stream(method, args, kwargs);
    this.release = () => {
      if (this.released) return;
      this.released = true;
      replica.inFlight--;
    };
  }

  async next(): Promise<IteratorResult<unknown>> {
    try {
      const result = await this.chunks.next();
      if (result.done) this.release();
      return result;
    } catch (err) {
      throw this.failed(err);
    }
  }

  /** Every chunk that has arrived since the last read (ChunkQueue.nextBatch); `[]` at the end. */
  async nextBatch(): Promise<unknown[]> {
    try {
      const items = await this.chunks.nextBatch();
      if (items.length === 0) this.release();
      return items;
    } catch (err) {
      throw this.failed(err);
    }
  }

  /** The runtime ended the stream and every chunk has been read. */
  get ended(): boolean {
    return this.chunks.ended;
  }

  /** Chunks already queued, without waiting (possibly none). */
  takeQueued(): unknown[] {
    return this.chunks.takeQueued();
  }

  private failed(err: unknown): HangarError {
    this.release();
    const error = callFailure(this.instance, err);
    this.instance.events.addCallFailure(`${this.target.route}: ${error.message}`);
    return error;
  }

  async return(): Promise<IteratorResult<unknown>> {
    this.release();
    await this.chunks.return?.();
    return { value: undefined, done: true };
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<unknown> {
    return this;
  }
}

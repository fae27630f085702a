import { MessageType, PROTOCOL_VERSION, type Message } from '../runtime/wire.js';
import { AbortedIds } from './aborted-ids.js';
import type { Engine } from './engine/engine.js';
import type { Progress } from './engine/model-file.js';
import { ExitCode } from './exit-codes.js';
import { CallAborted, InvalidInput, SourceUnreachable, fieldOf } from './invalid-input.js';
import { residentBytes } from './resident-memory.js';
import type { RuntimeLog } from './runtime-log.js';
import type { RuntimeSockets } from './runtime-sockets.js';
import type { StepOutbox } from './step-outbox.js';

export type EngineLoader = (spec: Record<string, unknown>, progress: Progress) => Promise<Engine>;

/**
 * LOAD and CALL, with the Python work loop's meanings (docs/runtime-protocol.md,
 * "Handshake and load", "Calls", "Abort"): one LOAD, then calls that run side by
 * side (the engine batches them), each answered with RESULT, or CHUNKs and END, or
 * ERROR of kind invalid, internal, aborted or unknown_method.
 */
export class CallServer {
  private engine: Engine | null = null;
  private loading = false;
  private readonly running = new Map<number, AbortController>();
  private readonly aborted = new AbortedIds();
  private received = 0;
  private answered = 0;

  constructor(
    private readonly sockets: RuntimeSockets,
    private readonly outbox: StepOutbox,
    private readonly load: EngineLoader,
    private readonly log: RuntimeLog,
    private readonly exit: (code: number, lingerMs: number) => void,
  ) {}

  onData(message: Message): void {
    if (message.type === MessageType.LOAD) this.onLoad(message.body);
    else if (message.type === MessageType.CALL) this.onCall(message.body);
    else this.log.warn(`ignoring message type 0x${message.type.toString(16)}, which the runtime does not receive`);
  }

  onAbort(id: number): void {
    const call = this.running.get(id);
    if (call) {
      this.log.info(`call ${id} aborted`);
      call.abort();
    } else this.aborted.add(id);
  }

  /** The PONG's stats (docs/runtime-protocol.md, "Stats"). */
  stats(): Record<string, number> {
    return {
      queue_depth: this.received - this.answered,
      batch_size: this.engine?.running() ?? 0,
      batch_steps: this.outbox.steps,
      batch_step_calls: this.outbox.stepCalls,
      rss_bytes: residentBytes(this.engine?.enginePids() ?? []),
    };
  }

  async close(): Promise<void> {
    for (const call of this.running.values()) call.abort();
    const engine = this.engine;
    this.engine = null;
    await engine?.close().catch((err: unknown) => this.log.warn(`closing the engine raised: ${(err as Error).message}`));
  }

  private onLoad(spec: Record<string, unknown>): void {
    if (this.engine || this.loading) {
      this.log.warn('ignoring a second LOAD: this runtime already holds a model');
      return;
    }
    this.loading = true;
    this.log.info(`loading ${String(spec.model_uid)} with engine ${String(spec.engine)}`);
    const progress: Progress = (value, stage, message) => this.sockets.send(MessageType.PROGRESS, { progress: value, stage, message });
    this.load(spec, progress).then(
      (engine) => {
        this.engine = engine;
        this.loading = false;
        this.sockets.send(MessageType.READY, { protocol: PROTOCOL_VERSION, pid: process.pid, engine: 'llama_cpp', abilities: engine.abilities, description: engine.describe() });
        this.log.info(`ready: ${JSON.stringify(engine.describe())}`);
      },
      (err: unknown) => {
        const kind = err instanceof SourceUnreachable ? 'unavailable' : err instanceof InvalidInput ? 'invalid' : 'internal';
        const message = (err as Error).message ?? String(err);
        this.log.error(`load failed: ${message}`);
        if (kind === 'internal' && (err as Error).stack) this.log.error((err as Error).stack!);
        this.sockets.send(MessageType.LOAD_FAILED, { kind, message });
        this.exit(ExitCode.LOAD_FAILED, 1000);
      },
    );
  }

  private onCall(body: Record<string, unknown>): void {
    const id = body.id;
    if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 0) {
      this.log.warn(`ignoring a CALL without an unsigned integer id: ${JSON.stringify(id)}`);
      return;
    }
    this.received++;
    const fail = (kind: string, message: string, param: string | null = null) => this.reply(MessageType.ERROR, { id, kind, message, ...(param ? { param } : {}) });
    if (this.aborted.take(id)) return fail('aborted', 'The call was aborted');
    if (!this.engine) return fail('invalid', 'No model is loaded yet');
    const { args = [], kwargs = {}, method } = body as { args?: unknown; kwargs?: unknown; method?: unknown };
    if (!Array.isArray(args)) return fail('invalid', 'args must be a list');
    if (typeof kwargs !== 'object' || kwargs === null || Array.isArray(kwargs)) return fail('invalid', 'kwargs must be a map');
    const run = typeof method === 'string' && Object.hasOwn(this.engine.methods, method) ? this.engine.methods[method] : undefined;
    if (!run) return fail('unknown_method', `its engine has no method ${JSON.stringify(method)} (it has ${Object.keys(this.engine.methods).join(', ')})`);
    const stream = body.stream === true;
    const controller = new AbortController();
    this.running.set(id, controller);
    const call = { stream, signal: controller.signal, chunk: (value: Record<string, unknown>) => this.outbox.push(MessageType.CHUNK, { id, value }) };
    run(args, kwargs as Record<string, unknown>, call)
      .then(
        (value) => {
          if (!stream) return this.reply(MessageType.RESULT, { id, value });
          this.outbox.push(MessageType.CHUNK, { id, value });
          this.reply(MessageType.END, { id });
        },
        (err: unknown) => {
          if (err instanceof CallAborted || controller.signal.aborted) return fail('aborted', 'The call was aborted');
          const invalid = err instanceof InvalidInput || err instanceof TypeError || err instanceof RangeError;
          if (!invalid) this.log.error(`call ${id} (${String(method)}) failed: ${(err as Error).stack ?? String(err)}`);
          fail(invalid ? 'invalid' : 'internal', (err as Error).message ?? String(err), invalid ? fieldOf(err) : null);
        },
      )
      .finally(() => this.running.delete(id));
  }

  private reply(type: typeof MessageType.RESULT | typeof MessageType.END | typeof MessageType.ERROR, body: Record<string, unknown>): void {
    this.answered++;
    this.outbox.push(type, body);
  }
}

import type { LifecycleTimings } from '../config/config.js';
import type { Logger } from '../logging/logger.js';
import { ConnectedRuntime } from './connected-runtime.js';
import { RuntimeConnection } from './runtime-connection.js';
import { RuntimeProcess, type OutputTarget } from './runtime-process.js';
import type { ReadyInfo, Runtime, RuntimeLauncher, StartOptions } from './runtime.js';
import { RuntimeFailure } from './runtime-failure.js';
import { chooseRunDirectory, removeRunDirectory, type RunDirectory } from './run-directory.js';
import { runtimeKindFor, type RuntimeKind } from './runtime-kind.js';
import { WarmSpare, type SpareRuntime } from './warm-spare.js';
import { hubTokenOverrides } from './hub-credentials.js';

export interface LocalLauncherOptions {
  python: string;
  runtimeRoot: string;
  home: string;
  timings: LifecycleTimings;
  logger: Logger;
  /** Keep one pre-started runtime for the next launch (`--no-warm-spare` turns it off). */
  warmSpare: boolean;
  /** Modules the spare imports while it waits (`--preload`). */
  warmSpareModules: readonly string[];
}

/**
 * Whether a runtime gets a session of its own. One whose engine computes on the CPU
 * stays in ours, where the lower priority it gives its compute ranks it below our
 * relay; on Linux a new session is a new autogroup, weighed against ours as an equal
 * group whatever its threads' priorities. A runtime with GPUs, or one that only
 * paces its tokens, keeps its priority, and a group of its own keeps its share of
 * the CPU when we are busy (docs/runtime-protocol.md, "CPU priority").
 */
function wantsOwnSession(start: StartOptions): boolean {
  return start.gpuIndexes.length > 0 || !start.cpuBound || runtimeKindFor(start.load.engine) === 'node';
}

/**
 * Starts runtimes as child processes of the control plane, with ipc:// sockets under
 * `<home>/run`, or in a private folder outside a home too deep for socket paths.
 */
export class LocalLauncher implements RuntimeLauncher {
  private readonly spares: WarmSpare | null;
  private runDirectory: Promise<RunDirectory> | null = null;

  constructor(private readonly options: LocalLauncherOptions) {
    this.spares = options.warmSpare
      ? new WarmSpare({ spawn: (name) => this.spawnSpare(name), logger: options.logger })
      : null;
  }

  /** Starts the first warm spare (when they are on); the service calls it once it listens. */
  warmSpare(): void {
    this.spares?.warm();
  }

  start(start: StartOptions): Promise<Runtime> {
    return this.startOn(start, true);
  }

  /** `mayTakeSpare`: false for the cold start after a spare died before its load began. */
  private async startOn(start: StartOptions, mayTakeSpare: boolean): Promise<Runtime> {
    const log = this.options.logger.child({ model_uid: start.load.model_uid, replica: start.replicaUid });
    if (start.signal.aborted) throw new RuntimeFailure('cancelled', 'The launch was cancelled');
    const ownSession = wantsOwnSession(start);
    const kind = runtimeKindFor(start.load.engine);
    // A spare shares our session: it does not know its engine until it is taken. It
    // is a Python runtime, so a Node runtime's engine never takes it.
    const spare = ownSession || kind !== 'python' || !mayTakeSpare ? null : ((await this.spares?.takeWhenWarm(start)) ?? null);
    if (start.signal.aborted) {
      // Cancelled while the spare finished starting: it stays the spare.
      if (spare) this.spares?.giveBack(spare);
      throw new RuntimeFailure('cancelled', 'The launch was cancelled');
    }
    let connection: RuntimeConnection;
    let child: RuntimeProcess;
    if (spare) {
      log.info({ pid: spare.process.pid, spare: spare.name }, 'launch takes the warm spare runtime');
      spare.output.log = log;
      ({ connection, process: child } = spare);
    } else {
      ({ connection, process: child } = await this.spawn(start.replicaUid, { log }, start.envs, start.gpuIndexes, [], ownSession, kind));
    }

    const onCancel = (): void => connection.failLoad(new RuntimeFailure('cancelled', 'The launch was cancelled'));
    start.signal.addEventListener('abort', onCancel, { once: true });
    // Whether the runtime has said anything about this load yet.
    let heard = false;
    const onProgress: StartOptions['onProgress'] = (p) => {
      heard = true;
      start.onProgress(p);
    };
    try {
      const ready = await connection.load(start.load, onProgress);
      return new LocalRuntime(start.replicaUid, connection, child, ready);
    } catch (err) {
      // A failed or cancelled start leaves nothing behind: the process is gone
      // and the socket files removed before the caller hears about it.
      await child.stop();
      // A spare that died before it began this load (still importing torch, whose
      // loading can hold Python's lock past the heartbeat timeout on a cold, busy
      // host) is the spare's failure, not the model's: the launch starts cold instead.
      if (spare && !heard && err instanceof RuntimeFailure && err.kind === 'dead' && !start.signal.aborted) {
        log.warn({ spare: spare.name, reason: err.message }, 'the warm spare died before it began the load; starting cold');
        return this.startOn(start, false);
      }
      throw err;
    } finally {
      start.signal.removeEventListener('abort', onCancel);
      // Warmed only now: a spare importing torch next to a loading model slows both.
      this.spares?.warm();
    }
  }

  async shutdown(): Promise<void> {
    await this.spares?.shutdown();
    if (this.runDirectory) await removeRunDirectory(await this.runDirectory).catch(() => undefined);
  }

  /** Chosen at the first spawn, and said once: which transport and where. */
  private runDir(): Promise<RunDirectory> {
    this.runDirectory ??= chooseRunDirectory(this.options.home).then((dir) => {
      const where = dir.private ? 'a private folder outside the home, whose path is too long for socket files' : 'the home';
      this.options.logger.info({ transport: 'ipc', socket_dir: dir.path }, `runtime sockets: ipc:// in ${where}`);
      return dir;
    }).catch((err: unknown) => {
      this.runDirectory = null;
      throw err;
    });
    return this.runDirectory;
  }

  private spawnSpare(name: string): Promise<SpareRuntime> {
    const output: OutputTarget = { log: this.options.logger.child({ spare: name }) };
    return this.spawn(name, output, {}, [], this.options.warmSpareModules, false).then((started) => ({ name, output, ...started }));
  }

  private async spawn(
    routingId: string,
    output: OutputTarget,
    envs: Record<string, string>,
    gpuIndexes: number[],
    preload: readonly string[],
    ownSession: boolean,
    kind: RuntimeKind = 'python',
  ): Promise<{ connection: RuntimeConnection; process: RuntimeProcess }> {
    const { python, runtimeRoot, timings } = this.options;
    const connection = new RuntimeConnection(routingId, timings, output.log);
    const endpoints = await connection.bind((await this.runDir()).path);
    const env: Record<string, string | undefined> = {
      ...envs,
      ...hubTokenOverrides(envs),
      // An empty list hides every GPU from CUDA: a CPU replica must not grab one by accident.
      CUDA_VISIBLE_DEVICES: gpuIndexes.length > 0 ? gpuIndexes.join(',') : '',
    };
    const child = RuntimeProcess.spawn(
      { python, runtimeRoot, endpoints, routingId, heartbeatTimeoutMs: timings.heartbeatTimeoutMs, env, preload, ownSession, kind },
      connection,
      timings,
      output,
    );
    return { connection, process: child };
  }
}

class LocalRuntime extends ConnectedRuntime {
  constructor(replicaUid: string, connection: RuntimeConnection, private readonly process: RuntimeProcess, ready: ReadyInfo) {
    super(replicaUid, connection, ready);
  }

  get pid(): number {
    return this.process.pid;
  }

  get address(): string {
    return `local://${this.replicaUid}`;
  }

  terminate(): Promise<void> {
    return this.process.stop();
  }
}

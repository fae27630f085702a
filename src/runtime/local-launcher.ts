import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { execa, type ResultPromise } from 'execa';
import type { LifecycleTimings } from '../config/config.js';
import type { Logger } from '../logging/logger.js';
import type { ChunkQueue } from './chunk-queue.js';
import { RuntimeConnection } from './runtime-connection.js';
import type { CallOptions, ReadyInfo, Runtime, RuntimeLauncher, StartOptions } from './runtime.js';
import { RuntimeFailure } from './runtime-failure.js';

export interface LocalLauncherOptions {
  python: string;
  runtimeRoot: string;
  home: string;
  timings: LifecycleTimings;
  logger: Logger;
}

type Subprocess = ResultPromise<{ reject: false; stdin: 'ignore'; stdout: 'pipe'; stderr: 'pipe'; buffer: false }>;

/** Starts runtimes as child processes of the control plane, with ipc:// sockets under `<home>/run`. */
export class LocalLauncher implements RuntimeLauncher {
  constructor(private readonly options: LocalLauncherOptions) {}

  async start(start: StartOptions): Promise<Runtime> {
    const { python, runtimeRoot, home, timings, logger } = this.options;
    const log = logger.child({ model_uid: start.load.model_uid, replica: start.replicaUid });
    const runDir = path.join(home, 'run');
    await mkdir(runDir, { recursive: true });
    if (start.signal.aborted) throw new RuntimeFailure('cancelled', 'The launch was cancelled');

    const connection = new RuntimeConnection(start.replicaUid, timings, log);
    const endpoints = await connection.bind(runDir);
    const args = [
      '-m', 'hangar_runtime',
      '--data', endpoints.data,
      '--control', endpoints.control,
      '--replica', start.replicaUid,
      '--parent-pid', String(process.pid),
      '--heartbeat-timeout', String(timings.heartbeatTimeoutMs / 1000),
    ];
    const env: Record<string, string> = {
      ...start.envs,
      PYTHONPATH: runtimeRoot,
      PYTHONUNBUFFERED: '1',
      // An empty list hides every GPU from CUDA: a CPU replica must not grab one by accident.
      CUDA_VISIBLE_DEVICES: start.gpuIndexes.length > 0 ? start.gpuIndexes.join(',') : '',
    };
    const subprocess: Subprocess = execa(python, args, {
      cwd: runtimeRoot,
      env,
      extendEnv: true,
      reject: false,
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
      buffer: false,
    });
    const lastLines = forwardLines(subprocess, log);
    const child = new LocalProcess(subprocess, connection, timings, log, lastLines);

    const onCancel = (): void => connection.failLoad(new RuntimeFailure('cancelled', 'The launch was cancelled'));
    start.signal.addEventListener('abort', onCancel, { once: true });
    try {
      const ready = await connection.load(start.load, start.onProgress);
      return new LocalRuntime(start.replicaUid, connection, child, ready);
    } catch (err) {
      // A failed or cancelled start leaves nothing behind: the process is gone
      // and the socket files removed before the caller hears about it.
      await child.stop();
      throw err;
    } finally {
      start.signal.removeEventListener('abort', onCancel);
    }
  }
}

// How much of a dead runtime's own output goes into the error its callers see.
const LAST_LINES_KEPT = 5;

/** Forwards the runtime's lines to our log; returns the last few, for the cause of a crash. */
function forwardLines(subprocess: Subprocess, log: Logger): string[] {
  const last: string[] = [];
  for (const stream of [subprocess.stderr, subprocess.stdout]) {
    if (!stream) continue;
    const lines = createInterface({ input: stream, crlfDelay: Infinity });
    lines.on('line', (line) => {
      if (line.length === 0) return;
      log.info({ source: 'runtime' }, line);
      last.push(line.length > 300 ? `${line.slice(0, 300)}...` : line);
      if (last.length > LAST_LINES_KEPT) last.shift();
    });
  }
  return last;
}

/** The child process and its stop escalation: ask, wait, SIGTERM, wait, SIGKILL. */
class LocalProcess {
  readonly exited: Promise<void>;
  private stopping: Promise<void> | null = null;

  constructor(
    private readonly subprocess: Subprocess,
    private readonly connection: RuntimeConnection,
    private readonly timings: LifecycleTimings,
    log: Logger,
    lastLines: string[],
  ) {
    this.exited = subprocess.then((result) => {
      const how = result.signal ? `signal ${result.signal}` : `exit code ${String(result.exitCode)}`;
      if (!this.stopping) log.warn({ pid: subprocess.pid }, `runtime process ended unexpectedly (${how})`);
      const output = lastLines.length > 0 ? `; its last output: ${lastLines.join(' | ')}` : '';
      connection.markDead(`the runtime process ended (${how})${output}`);
    });
  }

  get pid(): number {
    return this.subprocess.pid ?? -1;
  }

  stop(): Promise<void> {
    this.stopping ??= this.escalate();
    return this.stopping;
  }

  private async escalate(): Promise<void> {
    if (!this.connection.isDead) this.connection.requestShutdown();
    if (!(await this.exitsWithin(this.timings.shutdownGraceMs))) {
      this.subprocess.kill('SIGTERM');
      if (!(await this.exitsWithin(this.timings.terminateGraceMs))) {
        this.subprocess.kill('SIGKILL');
        await this.exited;
      }
    }
    await this.connection.close();
  }

  private exitsWithin(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      void this.exited.then(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }
}

class LocalRuntime implements Runtime {
  constructor(
    readonly replicaUid: string,
    private readonly connection: RuntimeConnection,
    private readonly process: LocalProcess,
    readonly ready: ReadyInfo,
  ) {}

  get pid(): number {
    return this.process.pid;
  }

  get address(): string {
    return this.connection.address;
  }

  call(method: string, args: unknown[], kwargs: Record<string, unknown>, options: CallOptions = {}): Promise<unknown> {
    return this.connection.call(method, args, kwargs, options.signal);
  }

  stream(method: string, args: unknown[], kwargs: Record<string, unknown>): ChunkQueue<unknown> {
    return this.connection.stream(method, args, kwargs);
  }

  onDeath(listener: (reason: string) => void): void {
    this.connection.onDeath(listener);
  }

  terminate(): Promise<void> {
    return this.process.stop();
  }
}

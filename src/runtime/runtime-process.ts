import path from 'node:path';
import { createInterface } from 'node:readline';
import { execa, type ResultPromise } from 'execa';
import type { LifecycleTimings } from '../config/config.js';
import { clipText, MESSAGE_LIMIT } from '../errors/clipped-text.js';
import type { Logger } from '../logging/logger.js';
import type { EndpointPair } from './endpoints.js';
import type { RuntimeConnection } from './runtime-connection.js';
import { nodeRuntimeEntry, type RuntimeKind } from './runtime-kind.js';
import { runtimeLineLevel } from './runtime-log-level.js';
import { LAST_OUTPUT_MARK } from './runtime-failure.js';

type Subprocess = ResultPromise<{ reject: false; stdin: 'ignore'; stdout: 'pipe'; stderr: 'pipe'; buffer: false }>;

export interface SpawnOptions {
  python: string;
  runtimeRoot: string;
  endpoints: Pick<EndpointPair, 'data' | 'control'>;
  /** The DEALERs' routing id: the replica uid, or a warm spare's own name. */
  routingId: string;
  heartbeatTimeoutMs: number;
  /** Over the control plane's own environment; an undefined value unsets one it would inherit. */
  env: Record<string, string | undefined>;
  /** `--preload`: modules imported before the LOAD is read (a warm spare's). */
  preload: readonly string[];
  /** A session of its own (a new autogroup on Linux), or ours (local-launcher.ts, wantsOwnSession). */
  ownSession: boolean;
  /** The Python runtime, or the Node one (the llama.cpp engine). Absent: Python. */
  kind?: RuntimeKind;
}

/** Where a runtime's output lines go; a warm spare's are re-pointed at the replica that takes it. */
export interface OutputTarget {
  log: Logger;
}

// How much of a dead runtime's own output goes into the error its callers see.
const LAST_LINES_KEPT = 5;
// After its connection drops, how long a dying process gets to be seen exiting.
const EXIT_AFTER_DISCONNECT_MS = 300;

/** The child process and its stop escalation: ask, wait, SIGTERM, wait, SIGKILL. */
export class RuntimeProcess {
  readonly exited: Promise<void>;
  private hasExited = false;
  private stopping: Promise<void> | null = null;

  private constructor(
    private readonly subprocess: Subprocess,
    private readonly connection: RuntimeConnection,
    private readonly timings: LifecycleTimings,
    output: OutputTarget,
    lastLines: string[],
  ) {
    this.exited = subprocess.then((result) => {
      this.hasExited = true;
      // What the engine started (vLLM's EngineCore holding GPU memory) must not outlive it.
      killGroup(subprocess.pid, 'SIGKILL', null);
      const how = result.signal ? `signal ${result.signal}` : `exit code ${String(result.exitCode)}`;
      if (!this.stopping) output.log.warn({ pid: subprocess.pid }, `runtime process ended unexpectedly (${how})`);
      const last = lastLines.length > 0 ? `${LAST_OUTPUT_MARK}${lastLines.join(' | ')}` : '';
      connection.markDead(`the runtime process ended (${how})`, last);
      // Nobody stops a runtime that ended by itself: its sockets, their files and its
      // engine's socket folder (endpoints.ts) would stay behind for every death.
      void connection.close().catch((err: unknown) => output.log.warn({ err }, 'could not remove the ended runtime\'s socket files'));
    });
    connection.onConnectionLost(() => void this.onConnectionLost());
    // Declared dead while still running (no heartbeat, DEAD, connection lost): a hung
    // process would otherwise stay behind, holding its memory and GPU.
    connection.onDeath(() => {
      if (!this.hasExited) void this.stop();
    });
  }

  /**
   * A process that exits closes its sockets, so the exit usually arrives just after
   * the disconnect: wait for it briefly, so callers learn the exit code or signal and
   * the last output. Still running after that, it is frozen or wedged below Python.
   */
  private async onConnectionLost(): Promise<void> {
    if (this.stopping || (await this.exitsWithin(EXIT_AFTER_DISCONNECT_MS))) return;
    const ms = this.timings.connectionTimeoutMs;
    this.connection.markDead(`the runtime stopped answering on its connection (no ZMTP heartbeat for ${ms} ms; frozen or unreachable)`);
  }

  /**
   * Spawns `python -m hangar_runtime` (or the Node runtime, with the same command
   * line) against a connection that is already bound.
   */
  static spawn(options: SpawnOptions, connection: RuntimeConnection, timings: LifecycleTimings, output: OutputTarget): RuntimeProcess {
    const node = options.kind === 'node';
    const args = [
      '--data', options.endpoints.data,
      '--control', options.endpoints.control,
      // One argument: a uid may start with "-", which a parser would take for an option.
      `--replica=${options.routingId}`,
      '--parent-pid', String(process.pid),
      '--heartbeat-timeout', String(options.heartbeatTimeoutMs / 1000),
      '--process-group',
    ];
    if (options.preload.length > 0) args.push('--preload', options.preload.join(','));
    const [file, argv] = node ? [process.execPath, [nodeRuntimeEntry(options.runtimeRoot), ...args]] : [options.python, ['-m', 'hangar_runtime', ...args]];
    // The CLI's credential (HANGAR_API_KEY, set in a shell that also starts the service)
    // is no runtime's business: unset there, as every runtime can read its environment.
    const env = { HANGAR_API_KEY: undefined, ...options.env };
    const subprocess: Subprocess = execa(file, argv, {
      cwd: options.runtimeRoot,
      env: node ? env : { ...env, PYTHONPATH: pythonPath(options.runtimeRoot, options.env.PYTHONPATH), PYTHONUNBUFFERED: '1' },
      extendEnv: true,
      reject: false,
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
      buffer: false,
      // `detached` starts a new session, which Linux makes a new autogroup that the
      // scheduler weighs against ours as an equal group: right for a runtime that
      // keeps its priority, wrong for one whose compute must rank below our relay
      // (docs/runtime-protocol.md, "CPU priority"). Either way the runtime leads its
      // own process group (`--process-group`, pgid = its pid), holding everything the
      // engine starts, so stopping it can end all of it (killGroup); terminal signals
      // then no longer reach it (it ignores SIGINT, and we stop it ourselves). Nor is
      // it killed when we exit: we stop it in order. Node cannot lead a group of its
      // own making (no setpgid), so a Node runtime always gets a session of its own.
      detached: options.ownSession || node,
      cleanup: false,
    });
    const lastLines = forwardLines(subprocess, output);
    return new RuntimeProcess(subprocess, connection, timings, output, lastLines);
  }

  get pid(): number {
    return this.subprocess.pid ?? -1;
  }

  stop(): Promise<void> {
    this.stopping ??= this.escalate();
    return this.stopping;
  }

  private async escalate(): Promise<void> {
    // Over a dead connection nobody hears SHUTDOWN: go straight to the signals.
    const asked = !this.connection.isDead;
    if (asked) this.connection.requestShutdown();
    if (!asked || !(await this.exitsWithin(this.timings.shutdownGraceMs))) {
      killGroup(this.subprocess.pid, 'SIGTERM', this.subprocess);
      if (!(await this.exitsWithin(this.timings.terminateGraceMs))) {
        killGroup(this.subprocess.pid, 'SIGKILL', this.subprocess);
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

/** Forwards the runtime's lines to our log; returns the last few, for the cause of a crash. */
function forwardLines(subprocess: Subprocess, output: OutputTarget): string[] {
  const last: string[] = [];
  for (const stream of [subprocess.stderr, subprocess.stdout]) {
    if (!stream) continue;
    const lines = createInterface({ input: stream, crlfDelay: Infinity });
    lines.on('line', (line) => {
      if (line.length === 0) return;
      output.log[runtimeLineLevel(line)]({ source: 'runtime' }, clipText(line, MESSAGE_LIMIT));
      last.push(line.length > 300 ? `${line.slice(0, 300)}...` : line);
      if (last.length > LAST_LINES_KEPT) last.shift();
    });
  }
  return last;
}

/**
 * Signals a runtime's whole process group (it makes one: `--process-group`). Gone
 * already is fine. A runtime stopped before it got to make its group (still starting
 * Python) is signalled alone, through its handle: only a process that has not been
 * reaped, never a pid that may have been reused.
 */
function killGroup(pid: number | undefined, signal: NodeJS.Signals, running: Subprocess | null): void {
  if (!pid) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: no group of that id (gone, or not made yet).
    running?.kill(signal);
  }
}

/**
 * The runtime's own folder first, so nothing shadows `hangar_runtime`; then the
 * launch's `envs.PYTHONPATH`, if it gave one (a guarded variable, registry/code-risks.ts),
 * which used to be dropped without a word.
 */
function pythonPath(runtimeRoot: string, extra: string | undefined): string {
  return extra ? `${runtimeRoot}${path.delimiter}${extra}` : runtimeRoot;
}

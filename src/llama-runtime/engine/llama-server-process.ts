import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { ServerConnectionLost, streamEvents, type ReadGate, type ServerEvent } from './server-stream.js';

/** How long a call whose connection failed waits to see whether the server has died. */
const SERVER_EXIT_WAIT_MS = 2_000;

/** How often the running server's /health is asked, and how long it may take to answer (watchHealth). */
const HEALTH_INTERVAL_MS = Number(process.env.HANGAR_LLAMA_SERVER_HEALTH_INTERVAL_MS) || 5_000;
const HEALTH_TIMEOUT_MS = Number(process.env.HANGAR_LLAMA_SERVER_HEALTH_TIMEOUT_MS) || 30_000;

/** A process's CPU time in clock ticks (user + system, all its threads), from /proc; null where that cannot be read (then taken as busy). */
function cpuTicks(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    // The fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return null;
  }
}

/** How the runtime starts llama.cpp's server for one replica. */
export interface LlamaServerOptions {
  binary: string;
  file: string;
  threads: number | null;
  /** Slots: calls generating at once (the engine's n_parallel). */
  parallel: number;
  /** Context per slot; llama-server's `-c` is the total, shared by the slots. */
  contextPerSlot: number;
  gpuLayers: number | null;
  /** Holds the streams' reads between the relay's steps (relay-pace.ts); null: never held. */
  pace: ReadGate | null;
  log: (line: string) => void;
  /**
   * Its socket, in a private folder beside the runtime's own sockets (endpoints.ts,
   * engineSocketOf), which the control plane removes when the runtime ends, however it
   * ends; null: in a fresh folder in the temp folder (a runtime whose endpoints are not local files).
   */
  socketPath: string | null;
}

/**
 * llama.cpp's `llama-server` as the engine process of a replica (issue 39; docs/decisions.md,
 * "llama.cpp: llama-server as the engine process"): the runtime keeps the protocol,
 * templates, tokens and parsing; the server evaluates, batches and samples in C++.
 * It listens on a Unix socket in a private 0700 folder, so only this runtime's user
 * reaches it, and no port is open. Its death ends the runtime (the control plane then
 * restarts the replica, as after any runtime death).
 */
export class LlamaServerProcess {
  private readonly agent: http.Agent;
  private exited = false;
  /** Asked to stop: its exit is expected, not a death. */
  private stopping = false;
  private readonly exitListeners: Array<(why: string) => void> = [];
  private watch: NodeJS.Timeout | null = null;
  /** When a stream last brought anything from the server. */
  private lastData = 0;
  /** Its CPU time at the last look, and when that last moved. */
  private cpuSeen: number | null = null;
  private lastBusy = 0;

  private constructor(
    private readonly child: ChildProcess,
    private readonly folder: string,
    readonly socketPath: string,
    private readonly pace: ReadGate | null,
  ) {
    // A kept-alive connection for the health checks while the server starts; streams open their own.
    this.agent = new http.Agent({ keepAlive: true });
    // However this runtime ends (a forced exit past SHUTDOWN's grace included), its
    // server ends with it: nothing is left holding the weights and a port-less socket.
    const reap = (): void => {
      if (!this.exited) child.kill('SIGKILL');
      rmSync(folder, { recursive: true, force: true });
    };
    process.once('exit', reap);
    child.once('exit', (code, signal) => {
      process.removeListener('exit', reap);
      this.exited = true;
      if (this.watch) clearInterval(this.watch);
      rmSync(folder, { recursive: true, force: true });
      if (!this.stopping) for (const listener of this.exitListeners) listener(`llama-server exited (${signal ?? `code ${code}`})`);
    });
  }

  // As long as the control plane waits for a load that reports no progress (loadStallTimeoutMs).
  static async start(options: LlamaServerOptions, timeoutMs = 15 * 60_000): Promise<LlamaServerProcess> {
    // Made 0700 either way: the socket in it is ours alone.
    const socketPath = options.socketPath ?? path.join(mkdtempSync(path.join(os.tmpdir(), 'hangar-llama-')), 'server.sock');
    const folder = path.dirname(socketPath);
    if (options.socketPath !== null) {
      rmSync(folder, { recursive: true, force: true });
      mkdirSync(folder, { mode: 0o700 });
    }
    const args = [
      '-m', options.file,
      '--host', socketPath,
      '-np', String(options.parallel),
      '-c', String(options.contextPerSlot * options.parallel),
      '--no-webui',
      // No prompt cache in host memory beside the slots' own: llama-server's default
      // (up to 8 GiB) grew ~15 MB per new prompt and never gave it back, memory the
      // budget and the estimate cannot see. A slot still reuses its own prompt's prefix.
      '--cache-ram', '0',
      // Warnings and errors only: its info lines (several per request, each a wake-up of
      // its log thread and of this runtime reading the pipe) land on the first token's path.
      '--log-verbosity', '2',
      ...(options.threads !== null ? ['-t', String(options.threads), '-tb', String(options.threads)] : []),
      // A CPU build warns about -ngl at all; only a GPU replica passes it.
      ...(options.gpuLayers !== null && options.gpuLayers > 0 ? ['-ngl', String(options.gpuLayers)] : []),
    ];
    // It ends with this runtime, however the runtime ends: the kernel's parent-death
    // signal, set by an engine patch (scripts/llama-server-patches.mjs) for this pid.
    // The relay's pace, kept by the server itself (another engine patch): a stream's
    // tokens are written at the pace's ticks, its end at once (relay-pace.ts).
    const env = { ...process.env, HANGAR_LLAMA_SERVER_PARENT: String(process.pid), HANGAR_STREAM_PACE_MS: String(options.pace?.intervalMs ?? 0) };
    const child = spawn(options.binary, args, { stdio: ['ignore', 'ignore', 'pipe'], env });
    const server = new LlamaServerProcess(child, folder, socketPath, options.pace);
    let tail = '';
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (part: string) => {
      tail = (tail + part).slice(-4000);
      for (const line of part.split('\n')) if (/error|failed|warn/i.test(line)) options.log(`llama-server: ${line.trim()}`);
    });
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (server.exited) throw new Error(`llama-server exited before it was ready: ${tail.trim().split('\n').slice(-5).join(' | ')}`);
      if ((await server.health()) === 'ok') {
        server.watchHealth(options.log);
        return server;
      }
      if (Date.now() > deadline) {
        await server.stop();
        throw new Error(`llama-server was not ready within ${timeoutMs / 1000} s`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** Its process id while it runs; null once it has exited. */
  get pid(): number | null {
    return this.exited ? null : (this.child.pid ?? null);
  }

  onExit(listener: (why: string) => void): void {
    this.exitListeners.push(listener);
  }

  private health(timeoutMs = 0): Promise<'ok' | 'not yet' | 'no answer'> {
    return new Promise((resolve) => {
      const req = http.get({ socketPath: this.socketPath, path: '/health', agent: this.agent }, (res) => {
        res.resume();
        resolve(res.statusCode === 200 ? 'ok' : 'not yet');
      });
      req.on('error', () => resolve('not yet'));
      if (timeoutMs > 0) req.setTimeout(timeoutMs, () => (req.destroy(), resolve('no answer')));
    });
  }

  /**
   * The control plane's heartbeat reaches this runtime, not its server: a server that
   * stops answering (stopped, deadlocked) left the replica READY and its calls waiting
   * for ever. One that neither answers /health within HEALTH_TIMEOUT_MS nor sent
   * anything on any stream meanwhile is killed: its death ends the runtime, and the
   * control plane restarts the replica, as after any death. Both, because /health waits
   * for a free HTTP thread, and a busy server's are all held by streams (its pool is
   * about n_parallel + 2): busy, it still sends tokens.
   */
  private watchHealth(log: (line: string) => void): void {
    let checking = false;
    this.watch = setInterval(() => {
      // Computing (a long prompt's prefill sends nothing for minutes on a CPU) is alive too.
      const ticks = cpuTicks(this.child.pid);
      if (ticks === null || ticks !== this.cpuSeen) (this.cpuSeen = ticks), (this.lastBusy = Date.now());
      if (checking || this.exited || this.stopping) return;
      checking = true;
      void this.health(HEALTH_TIMEOUT_MS).then((state) => {
        checking = false;
        if (state !== 'no answer' || this.exited || this.stopping) return;
        if (Date.now() - this.lastData < HEALTH_TIMEOUT_MS || Date.now() - this.lastBusy < HEALTH_TIMEOUT_MS) return;
        log(`llama-server did not answer /health within ${HEALTH_TIMEOUT_MS / 1000} s, nor send anything, nor use the CPU; killing it`);
        this.child.kill('SIGKILL');
      });
    }, HEALTH_INTERVAL_MS);
    this.watch.unref();
  }

  /**
   * A streamed POST: each read's server-sent events, in order (server-stream.ts).
   * Leaving the loop early (or `signal`) closes the connection, which stops the
   * generation in the server.
   */
  stream(route: string, body: unknown, signal: AbortSignal): AsyncGenerator<ServerEvent[]> {
    return this.noted(streamEvents(this.socketPath, route, body, signal, this.pace));
  }

  /** The stream, noting when the server last sent anything: a server that does is alive (watchHealth). */
  private async *noted(events: AsyncGenerator<ServerEvent[]>): AsyncGenerator<ServerEvent[]> {
    try {
      for await (const batch of events) {
        this.lastData = Date.now();
        yield batch;
      }
    } catch (err) {
      // The server died under the call (its exit comes just after the socket's error):
      // this runtime exits with it (onExit), and the control plane fails the call as any
      // call of a dead runtime, 503. Answered here first, it was a 500.
      if (err instanceof ServerConnectionLost && !this.stopping && (await this.exitsWithin(SERVER_EXIT_WAIT_MS)) && !this.stopping) await new Promise<never>(() => {});
      throw err;
    }
  }

  /** Whether the server has exited, or does within `ms`. */
  private exitsWithin(ms: number): Promise<boolean> {
    if (this.exited) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      this.child.once('exit', () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.watch) clearInterval(this.watch);
    this.agent.destroy();
    if (this.exited) return;
    await new Promise<void>((resolve) => {
      this.child.once('exit', () => resolve());
      this.child.kill('SIGTERM');
      setTimeout(() => this.child.kill('SIGKILL'), 5000).unref();
    });
    rmSync(this.folder, { recursive: true, force: true });
  }
}

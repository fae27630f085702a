import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const venvPython = path.join(repoRoot, 'python-runtime', '.venv', 'bin', 'python');

export interface TestServer {
  url: string;
  home: string;
  process: ChildProcess;
  /** Every JSON log line the server printed so far. */
  logs: Array<Record<string, unknown>>;
  /** What the server wrote to stderr so far. */
  stderr(): string;
  /** SIGTERM and wait for exit (graceful: stops every runtime). */
  stop(): Promise<void>;
  /** SIGKILL, no cleanup by the server. */
  kill(): Promise<void>;
}

export async function makeHome(prefix = 'hangar-test-'): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), prefix));
}

/**
 * Starts the real server binary (`bin/hangar.js start`) on a free loopback port and
 * waits until it says where it listens. Needs `npm run setup` to have built dist/.
 */
export async function startServer(options: { home?: string; env?: Record<string, string>; args?: string[] } = {}): Promise<TestServer> {
  const home = options.home ?? (await makeHome());
  const child = spawn(process.execPath, [path.join(repoRoot, 'bin', 'hangar.js'), 'start', '--host', '127.0.0.1', '--port', '0', '--home', home, ...(options.args ?? [])], {
    cwd: repoRoot,
    // The warm spare is off unless a test asks for it (env HANGAR_WARM_SPARE: ''): most
    // tests count runtime processes exactly, and every spare costs a torch import.
    env: { ...process.env, HF_HUB_OFFLINE: '1', TRANSFORMERS_OFFLINE: '1', HANGAR_WARM_SPARE: '0', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Array<Record<string, unknown>> = [];
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start within 60 s; stderr: ${stderr}`)), 60_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening; stderr: ${stderr}`));
    });
    createInterface({ input: child.stdout! }).on('line', (line) => {
      let entry: Record<string, unknown>;
      try {
        entry = JSON.parse(line) as Record<string, unknown>;
      } catch {
        return;
      }
      logs.push(entry);
      if (entry.msg === 'hangar is listening' && typeof entry.url === 'string') {
        clearTimeout(timer);
        resolve(entry.url);
      }
    });
  });
  const waitExit = async (ms: number): Promise<void> => {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([exited, new Promise((r) => (timer = setTimeout(r, ms)))]);
    // A pending timer would keep a process that called stop() (a global set-up) alive.
    clearTimeout(timer);
  };
  return {
    url,
    home,
    process: child,
    logs,
    stderr: () => stderr,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await waitExit(30_000);
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
    },
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
}

export async function removeHome(home: string): Promise<void> {
  await rm(home, { recursive: true, force: true });
}

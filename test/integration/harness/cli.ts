import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from './server.js';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliRun {
  child: ChildProcess;
  /** Everything printed to stderr so far. */
  stderr(): string;
  done: Promise<CliResult>;
}

/**
 * Starts the real `hangar` binary (bin/hangar.js) with a client command. `env` is added
 * to the test's environment minus any HANGAR_ENDPOINT/HANGAR_API_KEY the caller did not
 * set, so a developer's own settings never leak into a test. Killed after `timeoutMs`.
 */
export function startCli(args: string[], options: { env?: Record<string, string>; input?: string; timeoutMs?: number } = {}): CliRun {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.HANGAR_ENDPOINT;
  delete env.HANGAR_API_KEY;
  const child = spawn(process.execPath, [path.join(repoRoot, 'bin', 'hangar.js'), ...args], {
    cwd: repoRoot,
    env: { ...env, ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  if (options.input !== undefined) child.stdin!.end(options.input);
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
  const done = new Promise<CliResult>((resolve) => {
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
  return { child, stderr: () => stderr, done };
}

/** Runs a client command to its end; stdin is closed at once unless `input` is given. */
export function runCli(args: string[], options: { env?: Record<string, string>; input?: string; timeoutMs?: number } = {}): Promise<CliResult> {
  return startCli(args, { ...options, input: options.input ?? '' }).done;
}

import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { repoRoot } from './server.js';

/**
 * llama.cpp's own server as a benchmark baseline (issue 39): the binary
 * scripts/build-llama-server.mjs builds wholly from the source node-llama-cpp bundles,
 * tuned for this CPU, as a user builds it by hand (`--from-source`; built here on first
 * use: 6-9 minutes on 2 cores; its one patch of its own lets it run on a CPU with AMX,
 * scripts/llama-server-patches.mjs), started on a GGUF file with a thread count and
 * as many slots as Hangar's engine has sequences, on a loopback port. Its
 * `/v1/completions` answers the same OpenAI-style request as Hangar's.
 */
export interface LlamaServer {
  url: string;
  stop(): Promise<void>;
}

export function llamaServerBinary(): string {
  const out = execFileSync(process.execPath, [path.join(repoRoot, 'scripts', 'build-llama-server.mjs'), '--from-source'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 3_600_000 });
  return out.trim().split('\n').pop()!;
}

/**
 * Hangar's own build of the server (scripts/build-llama-server.mjs, the linked recipe with
 * the engine patches): the binary its runtimes run, started alone here to tell the relay's
 * cost from the engine's.
 */
export function engineServerBinary(): string {
  const out = execFileSync(process.execPath, [path.join(repoRoot, 'scripts', 'build-llama-server.mjs')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 3_600_000 });
  return out.trim().split('\n').pop()!;
}

export async function startLlamaServer(binary: string, file: string, options: { threads: number; parallel: number; contextPerSlot: number }): Promise<LlamaServer> {
  const port = await freePort();
  // The baseline is the unpatched server, which does not end with its parent by itself:
  // util-linux's setpriv gives it the parent-death signal, so a bench stopped half way
  // (Ctrl-C, a crash) leaves no server behind.
  const args = [
    '-m', file, '--host', '127.0.0.1', '--port', String(port), '-t', String(options.threads), '-tb', String(options.threads), '-np', String(options.parallel), '-c', String(options.contextPerSlot * options.parallel), '--no-webui', '--log-disable',
    // As Hangar's engine starts it (llama-server-process.ts): prompt caching the same on both sides.
    '--cache-ram', '0',
  ];
  const withParent = existsSync('/usr/bin/setpriv') ? ['/usr/bin/setpriv', ['--pdeathsig', 'KILL', '--', binary, ...args]] as const : [binary, args] as const;
  const child = spawn(withParent[0], [...withParent[1]], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (part: Buffer) => (stderr = (stderr + part.toString()).slice(-4000)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    // A signal's death (SIGILL from an instruction this CPU refuses) sets signalCode, not exitCode.
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`llama-server ended (${child.signalCode ?? `exit code ${child.exitCode}`}) before it was healthy: ${stderr}`);
    const health = await fetch(`${url}/health`).catch(() => null);
    if (health?.ok) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`llama-server did not become healthy in 120 s: ${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return { url, stop: () => stop(child) };
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 5000).unref();
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const port = (probe.address() as { port: number }).port;
      probe.close(() => resolve(port));
    });
  });
}

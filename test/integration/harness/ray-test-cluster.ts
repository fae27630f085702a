import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { repoRoot, venvPython } from './server.js';
import { processPids } from './processes.js';

/** Whether Ray is installed in the runtime's environment (it is optional: cluster tests skip without it). */
export function rayInstalled(): boolean {
  return spawnSync(venvPython, ['-c', 'import ray'], { stdio: 'ignore' }).status === 0;
}

/** Keeps Ray's drivers (our cluster agent) on loopback. */
export const rayEnv: Record<string, string> = { RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER: '0', RAY_USAGE_STATS_ENABLED: '0' };

/**
 * A real two-node Ray cluster on loopback (harness/ray_cluster.py), in a process group
 * of its own: the GCS, both raylets, their workers and the runtimes those start all
 * belong to it, so nothing of it can outlive the test.
 */
export class RayTestCluster {
  private readonly lines: string[] = [];
  private readonly waiters: Array<() => void> = [];

  private constructor(
    private readonly child: ChildProcess,
    private readonly exited: Promise<void>,
  ) {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      this.lines.push(line);
      for (const wake of this.waiters.splice(0)) wake();
    });
  }

  /** The GCS address (`host:port`). */
  address = '';
  /** The head's Ray Client server (`ray://127.0.0.1:<port>`). */
  clientAddress = '';
  secondNodeId = '';

  static async start(): Promise<RayTestCluster> {
    const child = spawn(venvPython, [path.join(repoRoot, 'test', 'integration', 'harness', 'ray_cluster.py'), String(await freePort())], {
      cwd: repoRoot,
      env: { ...process.env, ...rayEnv },
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-4000);
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const cluster = new RayTestCluster(child, exited);
    const first = await cluster.nextLine(90_000);
    if (!first) {
      await cluster.stop();
      throw new Error(`the Ray test cluster did not start: ${stderr}`);
    }
    const info = JSON.parse(first) as { address: string; client_address: string; second_node_id: string };
    cluster.address = info.address;
    cluster.clientAddress = info.client_address;
    cluster.secondNodeId = info.second_node_id;
    return cluster;
  }

  private async nextLine(ms: number): Promise<string | null> {
    const deadline = Date.now() + ms;
    while (this.lines.length === 0) {
      if (Date.now() > deadline || this.child.exitCode !== null) return null;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 500);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.lines.shift()!;
  }

  /** The pid of this cluster's GCS server (in the cluster's own process group), for a test that stops it. */
  async gcsPid(): Promise<number | undefined> {
    const { readFile } = await import('node:fs/promises');
    const group = this.child.pid;
    const candidates = await processPids(({ cmdline }) => cmdline.includes('gcs_server --'));
    for (const pid of candidates) {
      const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
      // After the parenthesised command name: state, parent pid, process group.
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) === group) return pid;
    }
    return undefined;
  }

  /** SIGKILLs the second node's raylet: its workers and runtimes die with it. */
  async killSecondNode(): Promise<void> {
    this.child.stdin!.write('kill-second\n');
    if (!(await this.nextLine(30_000))) throw new Error('the second Ray node was not killed');
  }

  /** Adds a node declaring 1 GPU (a GPU host joining); answers its node id. */
  async addGpuNode(): Promise<string> {
    this.child.stdin!.write('add-gpu-node\n');
    const line = await this.nextLine(60_000);
    if (!line) throw new Error('the GPU node did not join');
    return (JSON.parse(line) as { added: string }).added;
  }

  async removeGpuNode(): Promise<void> {
    this.child.stdin!.write('remove-gpu-node\n');
    if (!(await this.nextLine(30_000))) throw new Error('the GPU node was not removed');
  }

  /** Shuts the cluster down, then SIGKILLs whatever is left of its process group. */
  async stop(): Promise<void> {
    if (this.child.exitCode === null) this.child.stdin!.end('exit\n');
    await Promise.race([this.exited, new Promise((r) => setTimeout(r, 20_000))]);
    try {
      if (this.child.pid !== undefined) process.kill(-this.child.pid, 'SIGKILL');
    } catch {
      // the group is empty already
    }
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** Actors the cluster knows and their states, asked of Ray's GCS by a separate driver. */
export function actorStates(gcsAddress: string): Record<string, string> {
  const script = [
    'import json, ray',
    `ray.init(address=${JSON.stringify(gcsAddress)}, logging_level="ERROR", log_to_driver=False)`,
    'from ray._private import state',
    'print("ACTORS" + json.dumps({k: v["State"] for k, v in state.actors().items()}))',
  ].join('\n');
  const result = spawnSync(venvPython, ['-c', script], { env: { ...process.env, ...rayEnv }, encoding: 'utf8', timeout: 60_000 });
  const line = result.stdout.split('\n').find((l) => l.startsWith('ACTORS'));
  if (!line) throw new Error(`could not list Ray actors: ${result.stderr.slice(-1000)}`);
  return JSON.parse(line.slice('ACTORS'.length)) as Record<string, string>;
}

import { execFileSync } from 'node:child_process';
import { chmod, mkdtemp, readdir, stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { GenericContainer, Wait, type StartedTestContainer } from 'testcontainers';

/** The uid the image runs as (docker/Dockerfile). */
export const IMAGE_UID = 10001;

export interface HangarContainer {
  url: string;
  container: StartedTestContainer;
  /** Everything the container printed so far (stdout and stderr). */
  logs(): string;
  /** `docker stop` (SIGTERM, then SIGKILL after `graceSeconds`); the exit code, container removed. */
  stop(graceSeconds?: number): Promise<number>;
}

export interface Mount {
  source: string;
  target: string;
  mode?: 'ro' | 'rw';
}

/** A free loopback port: with host networking the service listens on the host's ports. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts the image with host networking (the only network these machines allow
 * containers), listening on 127.0.0.1 and a free port, and waits for the image's own
 * HEALTHCHECK (GET /status) to report healthy. `volume` names a Docker volume for
 * HANGAR_HOME; without it the image's anonymous volume is used and removed at stop.
 */
export async function startHangar(image: string, options: { volume?: string; mounts?: Mount[]; env?: Record<string, string> } = {}): Promise<HangarContainer> {
  const port = await freePort();
  let output = '';
  const mounts = [...(options.mounts ?? [])];
  if (options.volume) mounts.push({ source: options.volume, target: '/var/lib/hangar', mode: 'rw' });
  const container = await new GenericContainer(image)
    .withNetworkMode('host')
    .withEnvironment({ HANGAR_HOST: '127.0.0.1', HANGAR_PORT: String(port), HF_HUB_OFFLINE: '1', TRANSFORMERS_OFFLINE: '1', ...options.env })
    .withBindMounts(mounts.map((m) => ({ source: m.source, target: m.target, mode: m.mode ?? 'ro' })))
    .withWaitStrategy(Wait.forHealthCheck())
    .withStartupTimeout(120_000)
    .withLogConsumer((stream) => {
      stream.on('data', (chunk: Buffer | string) => {
        output += chunk.toString();
      });
    })
    .start();
  return {
    url: `http://127.0.0.1:${port}`,
    container,
    logs: () => output,
    async stop(graceSeconds = 60) {
      const id = container.getId();
      // Keep the container until its exit code is read; then remove it and its anonymous volume.
      await container.stop({ timeout: graceSeconds * 1000, remove: false });
      const exitCode = Number(docker(['inspect', '-f', '{{.State.ExitCode}}', id]).trim());
      docker(['rm', '-v', id]);
      return exitCode;
    },
  };
}

/** Runs the docker CLI (installed by docker/ci-build.sh) and returns its stdout. */
export function docker(args: string[]): string {
  return execFileSync('docker', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/**
 * A scratch folder on the host for files a container reads (models, an auth config):
 * mkdtemp makes it private to root, and the image runs as another user.
 */
export async function sharedDir(prefix: string): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), prefix));
}

/** Lets the image's user read everything under `dir` (after the host wrote it). */
export async function makeReadable(dir: string): Promise<void> {
  const info = await stat(dir);
  await chmod(dir, info.isDirectory() ? 0o755 : 0o644);
  if (!info.isDirectory()) return;
  for (const entry of await readdir(dir)) await makeReadable(path.join(dir, entry));
}

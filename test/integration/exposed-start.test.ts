import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { writeFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upstreamAuthConfig } from '../fixtures/auth-users.js';
import { makeHome, removeHome, repoRoot } from './harness/server.js';

// `unshare -rn`: a network namespace of the test's own (only a loopback, and down), so
// the service can listen on 0.0.0.0 without being reachable from anywhere.
const canIsolate = spawnSync('unshare', ['-rn', 'true']).status === 0;

/** Starts the service in its own network namespace and collects its log lines until it listens. */
async function startIsolated(home: string, args: string[]): Promise<Array<Record<string, unknown>>> {
  const child = spawn('unshare', ['-rn', process.execPath, path.join(repoRoot, 'bin', 'hangar.js'), 'start', '--port', '0', '--home', home, ...args], {
    cwd: repoRoot,
    env: { ...process.env, HANGAR_WARM_SPARE: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Array<Record<string, unknown>> = [];
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('did not start within 60 s')), 60_000);
      child.once('exit', (code) => reject(new Error(`exited with ${code}`)));
      createInterface({ input: child.stdout! }).on('line', (line) => {
        try {
          lines.push(JSON.parse(line) as Record<string, unknown>);
        } catch {
          return;
        }
        if (lines.at(-1)!.msg === 'hangar is listening') {
          clearTimeout(timer);
          resolve();
        }
      });
    });
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode === null ? child.once('exit', r) : r(null)));
  }
  return lines;
}

describe.skipIf(!canIsolate)('the start warning for an exposed service', () => {
  let home: string;
  beforeAll(async () => {
    home = await makeHome();
  });
  afterAll(async () => {
    await removeHome(home);
  });

  const exposed = (lines: Array<Record<string, unknown>>) => lines.filter((l) => String(l.msg).includes('with authentication off'));

  it('warns when it listens beyond loopback with authentication off', async () => {
    const lines = await startIsolated(home, ['--host', '0.0.0.0']);
    expect(exposed(lines)).toHaveLength(1);
    expect(exposed(lines)[0]!.level).toBe(40);
  }, 90_000);

  it('says nothing on loopback, or beyond it with authentication on', async () => {
    expect(exposed(await startIsolated(home, ['--host', '127.0.0.1']))).toEqual([]);
    const config = path.join(home, 'auth.json');
    await writeFile(config, JSON.stringify(upstreamAuthConfig()), { mode: 0o600 });
    expect(exposed(await startIsolated(home, ['--host', '0.0.0.0', '--auth-config', config]))).toEqual([]);
  }, 90_000);
});

import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { curveKeyPair } from 'zeromq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultPython, packageRoot } from '../../src/config/config.js';
import { createLogger } from '../../src/logging/logger.js';
import { clusterKeysFile, loadOrCreateClusterKeys, type ClusterKeys } from '../../src/runtime/cluster-keys.js';
import { CurveGate } from '../../src/runtime/curve-gate.js';
import { RuntimeConnection } from '../../src/runtime/runtime-connection.js';
import type { LoadSpec } from '../../src/runtime/runtime.js';

// Real sockets on loopback and real runtime processes: a runtime holding the
// cluster's keys is served; one without them, or with keys of its own, never gets
// a single message through.
const runtimeRoot = path.join(packageRoot, 'python-runtime');
const toyLauncher = path.join(runtimeRoot, 'tests', 'launchers', 'toy.py');
const timings = {
  heartbeatIntervalMs: 500,
  heartbeatTimeoutMs: 10_000,
  connectionHeartbeatMs: 200,
  connectionTimeoutMs: 2000,
  helloTimeoutMs: 25_000, // a loaded machine may take many seconds to start three Pythons at once
  loadStallTimeoutMs: 30_000,
};
const logger = createLogger('silent');

let home: string;
let keys: ClusterKeys;
const children: ResultPromise[] = [];

beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'hangar-curve-'));
  keys = await loadOrCreateClusterKeys(home);
  const gate = await CurveGate.open();
  gate.allow(keys.client.publicKey);
});

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await Promise.allSettled(children);
  await rm(home, { recursive: true, force: true });
});

function spawnRuntime(replica: string, endpoints: { data: string; control: string }, env: Record<string, string>): ResultPromise {
  const child = execa(defaultPython(), ['-m', 'hangar_runtime', '--data', endpoints.data, '--control', endpoints.control, '--replica', replica, '--heartbeat-timeout', '10'], {
    cwd: runtimeRoot,
    env: { PYTHONPATH: runtimeRoot, ...env },
    reject: false,
    stdin: 'ignore',
  });
  children.push(child);
  return child;
}

function spec(replica: string): LoadSpec {
  return {
    model_type: 'flexible',
    model_name: 'toy',
    model_uid: 'toy',
    replica_uid: replica,
    engine: 'python',
    model_uri: toyLauncher,
    launcher_args: {},
    engine_kwargs: {},
  };
}

function curveEnv(server: string, client: { publicKey: string; secretKey: string }): Record<string, string> {
  return { HANGAR_CURVE_SERVER_KEY: server, HANGAR_CURVE_PUBLIC_KEY: client.publicKey, HANGAR_CURVE_SECRET_KEY: client.secretKey };
}

async function attempt(replica: string, env: (k: ClusterKeys) => Record<string, string>): Promise<{ connection: RuntimeConnection; outcome: Promise<unknown> }> {
  const connection = new RuntimeConnection(replica, timings, logger);
  const endpoints = await connection.bindSecure({ host: '127.0.0.1', server: keys.server });
  expect(endpoints.data).toMatch(/^tcp:\/\/127\.0\.0\.1:\d+$/);
  spawnRuntime(replica, endpoints, env(keys));
  return { connection, outcome: connection.load(spec(replica), () => undefined) };
}

describe('CURVE security on runtime sockets', () => {
  it('keeps the cluster keys in a file only its owner can read, and reuses them', async () => {
    const mode = (await stat(clusterKeysFile(home))).mode & 0o777;
    expect(mode).toBe(0o600);
    expect((await stat(path.dirname(clusterKeysFile(home)))).mode & 0o077).toBe(0);
    expect(await loadOrCreateClusterKeys(home)).toEqual(keys);
    const onDisk = JSON.parse(await readFile(clusterKeysFile(home), 'utf8')) as ClusterKeys;
    expect(onDisk.server.publicKey).toHaveLength(40);
    expect(onDisk.client.publicKey).not.toBe(onDisk.server.publicKey);
  });

  it('serves a runtime that holds the cluster keys', async () => {
    const { connection, outcome } = await attempt('curve-ok', (k) => curveEnv(k.server.publicKey, k.client));
    try {
      const ready = (await outcome) as { engine: string };
      expect(ready.engine).toBe('python');
      expect(await connection.call('infer', ['echo', 'through curve'], {})).toBe('through curve');
    } finally {
      connection.requestShutdown();
      await connection.close();
    }
  });

  // The three run at once: each waits out the hello timeout, and a loaded machine may
  // take seconds just to start a Python process.
  it('refuses a runtime with no keys, with keys of its own, or with the wrong server key', async () => {
    const attempts = await Promise.all([
      attempt('curve-none', () => ({})),
      attempt('curve-stranger', (k) => curveEnv(k.server.publicKey, curveKeyPair())),
      attempt('curve-wrong-server', (k) => curveEnv(curveKeyPair().publicKey, k.client)),
    ]);
    const outcomes = await Promise.allSettled(attempts.map((a) => a.outcome));
    for (const a of attempts) await a.connection.close();
    for (const outcome of outcomes) expect(outcome.status).toBe('rejected');
    const [none, stranger, wrongServer] = outcomes.map((o) => String((o as PromiseRejectedResult).reason?.message));
    // A plain (NULL) peer fails at the mechanism mismatch; whether libzmq reports that
    // as a handshake event varies from run to run, so only its refusal is asserted.
    expect(none).toMatch(/did not say hello/);
    // A stranger's CURVE key reaches our ZAP handler, which refuses it and says so.
    expect(stranger).toMatch(/did not say hello .*refused for lacking the cluster's CURVE key/);
    // A client encrypting to another server's key never completes a handshake with us.
    expect(wrongServer).toMatch(/did not say hello/);
  });
});

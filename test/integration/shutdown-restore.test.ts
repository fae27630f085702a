import { spawn } from 'node:child_process';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writePythonLauncher } from './harness/fixtures.js';
import { client } from './harness/http.js';
import { isAlive, runtimePids, waitFor } from './harness/processes.js';
import { makeHome, removeHome, repoRoot, startServer } from './harness/server.js';
import { readSse } from './harness/sse-client.js';

const SLOW = `import time

def load():
    return {}

def infer(model, seconds=0):
    time.sleep(seconds)
    return {"slept": seconds}
`;

describe('shutdown, drain and restore', () => {
  let work: string;
  let slowFile: string;
  let scalerFile: string;

  beforeAll(async () => {
    work = await makeHome('hangar-lifecycle-');
    slowFile = path.join(work, 'slow.py');
    await writeFile(slowFile, SLOW);
    scalerFile = await writePythonLauncher(work);
  });
  afterAll(async () => removeHome(work));

  /** A client of the server, which serves `slow` (a call sleeps the `seconds` it is given). */
  const serveSlow = async (url: string): Promise<ReturnType<typeof client>> => {
    const api = client(url);
    expect((await api.post('/v1/model_registrations/flexible', { model: { model_name: 'slow', model_uri: slowFile, launcher: 'python' }, persist: false })).status).toBe(200);
    expect((await api.post('/v1/models', { model_name: 'slow', model_type: 'flexible' })).status).toBe(200);
    return api;
  };

  it('lets a long request finish on SIGTERM, refuses new ones with 503, and exits 0', async () => {
    const server = await startServer();
    try {
      const api = await serveSlow(server.url);
      const pids = await runtimePids(server.home);
      const long = api.post('/v1/flexible/infers', { model: 'slow', seconds: 2 });
      await new Promise((r) => setTimeout(r, 300));
      const exited = new Promise<number | null>((resolve) => server.process.once('exit', (code) => resolve(code)));
      server.process.kill('SIGTERM');
      await new Promise((r) => setTimeout(r, 200));
      const refused = await api.post('/v1/flexible/infers', { model: 'slow', seconds: 0 });
      expect(refused.status).toBe(503);
      expect(refused.body.error.code).toBe('server_draining');
      const done = await long;
      expect(done.status).toBe(200);
      expect(done.body).toEqual({ slept: 2 });
      expect(await exited).toBe(0);
      for (const pid of pids) expect(isAlive(pid)).toBe(false);
    } finally {
      await server.kill();
      await removeHome(server.home);
    }
  });

  it('stops at the drain timeout: a request still running is answered 503 (a stream its error event), the runtimes go, and it exits 0', async () => {
    const server = await startServer({ env: { HANGAR_DRAIN_TIMEOUT_MS: '1000' } });
    try {
      const api = await serveSlow(server.url);
      expect((await api.post('/v1/models', { model_name: 'simulator', model_engine: 'simulator', model_uid: 'sim', step_ms: 50 })).status).toBe(200);
      const pids = await runtimePids(server.home);
      const long = api.post('/v1/flexible/infers', { model: 'slow', seconds: 60 }).catch((err: unknown) => err);
      const stream = readSse(server.url, '/v1/completions', { model: 'sim', prompt: 'x', max_tokens: 100_000, stream: true });
      await new Promise((r) => setTimeout(r, 300));
      const exited = new Promise<number | null>((resolve) => server.process.once('exit', (code) => resolve(code)));
      const signalled = Date.now();
      server.process.kill('SIGTERM');
      // Before, close() waited for the request (and any idle kept-alive socket) past the
      // drain timeout, as long as its client stayed.
      const code = await Promise.race([exited, new Promise<string>((r) => setTimeout(() => r('still running after 20 s'), 20_000))]);
      expect(code).toBe(0);
      expect(Date.now() - signalled).toBeLessThan(20_000);
      // Before, both were cut with no error: no HTTP answer at all, a stream with no error and no [DONE].
      const answer = (await long) as { status: number; body: { error?: { code?: string; message?: string } } };
      expect([answer.status, answer.body?.error?.code], JSON.stringify(answer)).toEqual([503, 'runtime_unavailable']);
      expect(answer.body.error!.message).toContain('the server is shutting down');
      const events = (await stream).data;
      expect(JSON.parse(events.at(-1)!).error?.message, events.at(-1)).toContain('the server is shutting down');
      for (const pid of pids) expect(isAlive(pid)).toBe(false);
    } finally {
      await server.kill();
      await removeHome(server.home);
    }
  });

  it("ends the drain's wait at a second SIGTERM (Ctrl-C twice), answering what still runs 503", async () => {
    const server = await startServer({ env: { HANGAR_DRAIN_TIMEOUT_MS: '60000' } });
    try {
      const api = await serveSlow(server.url);
      const long = api.post('/v1/flexible/infers', { model: 'slow', seconds: 120 }).catch((err: unknown) => err);
      await new Promise((r) => setTimeout(r, 300));
      const exited = new Promise<number | null>((resolve) => server.process.once('exit', (code) => resolve(code)));
      server.process.kill('SIGTERM');
      await new Promise((r) => setTimeout(r, 500));
      server.process.kill('SIGTERM');
      // Well before the drain's 60 s: a second signal changed nothing.
      const code = await Promise.race([exited, new Promise<string>((r) => setTimeout(() => r('still running after 30 s'), 30_000))]);
      expect(code).toBe(0);
      const answer = (await long) as { status: number; body: { error?: { message?: string } } };
      expect([answer.status, answer.body?.error?.message], JSON.stringify(answer)).toEqual([503, expect.stringContaining('the server is shutting down')]);
    } finally {
      await server.kill();
      await removeHome(server.home);
    }
  });

  it('brings 3 models back with the same uids after a SIGKILL, and not with --no-restore', async () => {
    const home = await makeHome();
    try {
      let server = await startServer({ home });
      let api = client(server.url);
      expect((await api.post('/v1/model_registrations/flexible', { model: { model_name: 'scaler', model_uri: scalerFile, launcher: 'python', launcher_args: { scale: 5 } }, persist: true })).status).toBe(200);
      for (const uid of ['one', 'two', 'three']) expect((await api.post('/v1/models', { model_name: 'scaler', model_type: 'flexible', model_uid: uid, replica: uid === 'two' ? 2 : 1 })).status).toBe(200);
      const before = await runtimePids(home);
      expect(before).toHaveLength(4);
      await server.kill();
      expect(await waitFor(() => before.every((pid) => !isAlive(pid)), 10_000)).toBe(true);

      server = await startServer({ home });
      api = client(server.url);
      const ready = await waitFor(async () => {
        const instances = (await api.get('/v1/models/instances')).body as any[];
        return instances.length === 3 && instances.every((i) => i.status === 'READY');
      }, 30_000);
      expect(ready).toBe(true);
      const instances = (await api.get('/v1/models/instances')).body as any[];
      expect(instances.map((i) => i.model_uid)).toEqual(['one', 'three', 'two']);
      expect(instances.find((i) => i.model_uid === 'two').replica).toBe(2);
      expect((await api.post('/v1/flexible/infers', { model: 'two', args: [[1]] })).body.values).toEqual([5]);
      await server.stop();

      server = await startServer({ home, args: ['--no-restore'] });
      api = client(server.url);
      expect((await api.get('/v1/models/instances')).body).toEqual([]);
      await server.stop();
    } finally {
      await removeHome(home);
    }
  }, 120_000);

  it('leaves the old or the new registration file, never a broken one, when a writer is SIGKILLed at random moments', async () => {
    const dir = await makeHome('hangar-atomic-');
    const target = path.join(dir, 'model.json');
    const atomic = path.join(repoRoot, 'dist', 'storage', 'atomic-file.js');
    // The writer alternates two versions of a large file as fast as it can.
    const writer = `
const { writeFileAtomic } = await import(${JSON.stringify(atomic)});
const versions = ['old', 'new'].map((v) => JSON.stringify({ version: v, pad: v.repeat(200000) }));
for (let i = 0; ; i++) await writeFileAtomic(${JSON.stringify(target)}, versions[i % 2]);
`;
    try {
      await writeFile(target, JSON.stringify({ version: 'old', pad: 'old'.repeat(200000) }));
      for (let round = 0; round < 25; round++) {
        const child = spawn(process.execPath, ['--input-type=module', '-e', writer], { stdio: 'ignore' });
        await new Promise((r) => setTimeout(r, 20 + Math.random() * 80));
        child.kill('SIGKILL');
        await new Promise((r) => child.once('exit', r));
        const parsed = JSON.parse(await readFile(target, 'utf8'));
        expect(['old', 'new']).toContain(parsed.version);
        expect(parsed.pad.length).toBe(parsed.version.length * 200000);
      }
      // Temp files of killed writers may remain, but never under the target's name.
      expect((await readdir(dir)).filter((f) => f.endsWith('.json'))).toEqual(['model.json']);
    } finally {
      await removeHome(dir);
    }
  }, 60_000);
});

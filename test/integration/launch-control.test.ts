import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from './harness/http.js';
import { isAlive, runtimePids, waitFor } from './harness/processes.js';
import { makeHome, removeHome, startServer, type TestServer } from './harness/server.js';

// A launcher whose load blocks until a file appears (bounded), so a test can look at
// a launch in progress; and whose infer can crash its own process on request.
const SLOW_LAUNCHER = `import os, time

def load(gate, limit_s=30):
    deadline = time.time() + limit_s
    while not os.path.exists(gate) and time.time() < deadline:
        time.sleep(0.05)
    return {"gate": gate}

def infer(model, action="echo", value=None):
    if action == "crash":
        print("about to crash: the engine's own last words", flush=True)
        os._exit(17)
    if action == "sleep":
        time.sleep(value)
    if action == "fail":
        raise RuntimeError("the model broke")
    return {"value": value, "pid": os.getpid()}
`;

describe('launch control: progress, cancel, loading, limits, crashes', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  let work: string;
  let gate: string;

  beforeAll(async () => {
    work = await makeHome('hangar-fixtures-');
    gate = path.join(work, 'gate');
    const file = path.join(work, 'slow_launcher.py');
    await writeFile(file, SLOW_LAUNCHER);
    server = await startServer();
    api = client(server.url);
    const definition = { model_name: 'slow', model_uri: file, launcher: 'python', launcher_args: { gate } };
    expect((await api.post('/v1/model_registrations/flexible', { model: definition, persist: false })).status).toBe(200);
  });

  afterAll(async () => {
    await server?.stop();
    await removeHome(server.home);
    await removeHome(work);
  });

  it('shows a launch in progress, refuses calls with 503, and cancels it to ERROR with no process left', async () => {
    const launch = await api.post('/v1/models?wait_ready=false', { model_name: 'slow', model_type: 'flexible', model_uid: 'pending' });
    expect(launch.status, launch.text).toBe(200);
    expect(await waitFor(async () => (await runtimePids(server.home)).length === 1, 10_000)).toBe(true);

    const instance = (await api.get('/v1/models/instances?model_uid=pending')).body[0];
    expect(instance.status).toBe('CREATING');
    expect(instance.model_ability).toEqual([]);
    expect((await api.get('/v1/models')).body.data).toEqual([]);
    const progress = (await api.get('/v1/models/pending/progress')).body.progress;
    expect(progress).toBeGreaterThanOrEqual(0);
    expect(progress).toBeLessThan(1);

    const early = await api.post('/v1/flexible/infers', { model: 'pending', args: [] });
    expect(early.status).toBe(503);
    expect(early.body.error.code).toBe('model_loading');
    expect(early.headers.get('retry-after')).toBeTruthy();

    expect((await api.post('/v1/models/pending/cancel')).status).toBe(200);
    expect((await api.get('/v1/models/instances?model_uid=pending')).body[0].status).toBe('ERROR');
    // Its description says so too (it looked like a model's).
    expect((await api.get('/v1/models/pending')).body).toMatchObject({ status: 'ERROR', error_message: expect.stringContaining('cancel') });
    expect(await runtimePids(server.home)).toEqual([]);
    // Not coming back: not found (no 503 that invites retries), saying why.
    const after = await api.post('/v1/flexible/infers', { model: 'pending', args: [] });
    expect([after.status, after.body.error.code]).toEqual([404, 'model_not_found']);
    expect(after.body.detail).toContain('cancelled');
  });

  it('terminates a model that is still launching', async () => {
    // Python's spelling, as Xinference's client sends it (requests writes `?wait_ready=False`).
    expect((await api.post('/v1/models?wait_ready=False', { model_name: 'slow', model_type: 'flexible', model_uid: 'doomed' })).status).toBe(200);
    expect(await waitFor(async () => (await runtimePids(server.home)).length === 1, 10_000)).toBe(true);
    expect((await api.delete('/v1/models/doomed')).status).toBe(200);
    expect(await runtimePids(server.home)).toEqual([]);
    expect((await api.get('/v1/models/doomed')).status).toBe(404);
  });

  it('answers 429 past request_limits and 500 with the engine error, and keeps serving', async () => {
    await writeFile(gate, 'open');
    expect((await api.post('/v1/models', { model_name: 'slow', model_type: 'flexible', model_uid: 'closed', request_limits: 0 })).status).toBe(200);
    const limited = await api.post('/v1/flexible/infers', { model: 'closed', args: [] });
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('request_limit_reached');
    // When to try again, as OpenAI's SDKs read it (they backed off blind before).
    expect(limited.headers.get('retry-after')).toBe('1');
    expect((await api.delete('/v1/models/closed')).status).toBe(200);

    expect((await api.post('/v1/models', { model_name: 'slow', model_type: 'flexible', model_uid: 'fragile' })).status).toBe(200);
    const failed = await api.post('/v1/flexible/infers', { model: 'fragile', action: 'fail' });
    expect(failed.status).toBe(500);
    expect(failed.body.detail).toBe('the model broke');
    const events = (await api.get('/v1/models/fragile/events')).body;
    expect(events.some((e: any) => e.event_type === 'ERROR' && e.event_content.includes('the model broke'))).toBe(true);
    expect((await api.post('/v1/flexible/infers', { model: 'fragile', value: 3 })).body.value).toBe(3);
  });

  it('tells a call cut by a terminate that the model was terminated', async () => {
    await writeFile(gate, 'open');
    expect((await api.post('/v1/models', { model_name: 'slow', model_type: 'flexible', model_uid: 'doomed' })).status).toBe(200);
    const call = api.post('/v1/flexible/infers', { model: 'doomed', action: 'sleep', value: 20 });
    expect(await waitFor(async () => (await api.get('/v1/models/doomed/replicas')).body[0]?.in_flight === 1, 10_000)).toBe(true);
    expect((await api.delete('/v1/models/doomed')).status).toBe(200);
    const cut = await call;
    expect([cut.status, cut.body.error.code]).toEqual([503, 'runtime_unavailable']);
    expect(cut.body.detail).toContain('the model was terminated');
    // A state the service was in, not a fault of its own: a warning, no stack.
    const logged = server.logs.filter((l) => JSON.stringify(l).includes('the model was terminated'));
    expect(logged.length).toBeGreaterThan(0);
    expect(logged.filter((l) => (l.level as number) >= 50 || JSON.stringify(l).includes('"stack"'))).toEqual([]);
  });

  it('fails a call at once with 503 naming the cause when its runtime dies, then restarts the replica', async () => {
    const pid = (await api.post('/v1/flexible/infers', { model: 'fragile', value: 1 })).body.pid as number;
    const crashed = await api.post('/v1/flexible/infers', { model: 'fragile', action: 'crash' });
    expect(crashed.status).toBe(503);
    expect(crashed.body.error.code).toBe('runtime_unavailable');
    expect(crashed.body.detail).toContain('fragile');
    expect(crashed.body.detail).toContain('exit code 17');
    // Its output is the operator's (the log, the model's events), not the caller's.
    expect(crashed.body.detail).not.toContain('last words');
    expect(isAlive(pid)).toBe(false);
    const died = (await api.get('/v1/models/fragile/events')).body.map((e: { event_content: string }) => e.event_content);
    expect(died.some((e: string) => e.includes('exit code 17') && e.includes('last words'))).toBe(true);

    // While the replica comes back, calls get 503 with Retry-After; then it serves again.
    const during = await api.post('/v1/flexible/infers', { model: 'fragile', value: 1 });
    if (during.status === 503) expect(during.headers.get('retry-after')).toBeTruthy();
    const back = await waitFor(async () => (await api.post('/v1/flexible/infers', { model: 'fragile', value: 2 })).status === 200, 15_000);
    expect(back).toBe(true);
    const newPid = (await api.post('/v1/flexible/infers', { model: 'fragile', value: 3 })).body.pid as number;
    expect(newPid).not.toBe(pid);
    const events = (await api.get('/v1/models/fragile/events')).body.map((e: any) => e.event_content);
    expect(events.some((e: string) => e.includes('died') && e.includes('exit code 17'))).toBe(true);
    expect(events).toContain('Replica fragile-0 restarted');
    const instance = (await api.get('/v1/models/instances?model_uid=fragile')).body[0];
    expect(instance.status).toBe('READY');
    expect(instance.replica_statuses[0]).toMatchObject({ status: 'READY', restarts: 1 });
    expect((await api.delete('/v1/models/fragile')).status).toBe(200);
    expect(isAlive(newPid)).toBe(false);
  });

  it('logs the runtime\'s own lines with the model uid attached', () => {
    const forwarded = server.logs.filter((l) => l.source === 'runtime' && l.model_uid === 'fragile');
    expect(forwarded.length).toBeGreaterThan(0);
    expect(forwarded.every((l) => typeof l.replica === 'string' && (l.replica as string).startsWith('fragile-'))).toBe(true);
  });

  it('answers the service routes', async () => {
    expect((await api.get('/v1/cluster/auth')).body).toEqual({ auth: false });
    expect((await api.get('/v1/cluster/devices')).body).toBe(0);
    const status = (await api.get('/status')).body;
    expect(status.uptime).toBeGreaterThanOrEqual(0);
    const doc = (await api.get('/openapi.json')).body;
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/v1/models', '/v1/model_registrations/{model_type}', '/v1/flexible/infers']));
    expect(doc.paths['/v1/models'].post.requestBody.content['application/json'].schema.properties).toHaveProperty('model_name');
    expect((await fetch(`${server.url}/docs`)).status).toBe(200);
  });
});

describe('a load that stops moving', () => {
  it('fails after the stall timeout and leaves no process', async () => {
    const work = await makeHome('hangar-stall-');
    const file = path.join(work, 'stuck.py');
    await writeFile(file, 'import time\n\ndef load():\n    time.sleep(60)\n\ndef infer(model):\n    return 1\n');
    const server = await startServer({ env: { HANGAR_LOAD_STALL_TIMEOUT_MS: '1500' } });
    try {
      const api = client(server.url);
      expect((await api.post('/v1/model_registrations/flexible', { model: { model_name: 'stuck', model_uri: file, launcher: 'python' }, persist: false })).status).toBe(200);
      const res = await api.post('/v1/models', { model_name: 'stuck', model_type: 'flexible' });
      expect(res.status).toBe(500);
      expect(res.body.error.code).toBe('model_load_failed');
      expect(res.body.detail).toContain('no progress for 2 s');
      expect(await runtimePids(server.home)).toEqual([]);
      // A load that finished is out of the deadline's reach: the replica lives on past it.
      const steady = await api.post('/v1/models', { model_name: 'simulator', model_type: 'LLM', model_engine: 'simulator', model_uid: 'steady' });
      expect(steady.status, steady.text).toBe(200);
      const pid = (await api.get('/v1/models/steady/replicas')).body[0].pid as number;
      await new Promise((resolve) => setTimeout(resolve, 3_500));
      const events = (await api.get('/v1/models/steady/events')).body.map((e: { event_content: string }) => e.event_content);
      expect(events.filter((e: string) => /died|restart/i.test(e))).toEqual([]);
      expect((await api.get('/v1/models/steady/replicas')).body[0]).toMatchObject({ pid, status: 'READY' });
    } finally {
      await server.stop();
      await removeHome(server.home);
      await removeHome(work);
    }
  });
});

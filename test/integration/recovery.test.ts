import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from './harness/http.js';
import { isAlive, runtimePids, waitFor } from './harness/processes.js';
import { makeHome, removeHome, startServer, type TestServer } from './harness/server.js';
import { tinyLlm, tinyLlmRegistration } from './harness/tiny-models.js';

// A launcher that loads once, then crashes on every later start (its marker file exists).
const CRASH_ON_RESTART = `import os

def load(marker):
    if os.path.exists(marker):
        print("refusing to start again", flush=True)
        os._exit(9)
    open(marker, "w").close()
    return {}

def infer(model, action="echo"):
    if action == "crash":
        os._exit(3)
    return {"pid": os.getpid()}
`;

// Sleeps as long as it is asked: a call that is surely in flight when the process freezes.
const SLEEPER = `import os, time

def load():
    return {}

def infer(model, seconds=0):
    time.sleep(seconds)
    return {"pid": os.getpid()}
`;

describe('crashed runtimes', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  let work: string;

  beforeAll(async () => {
    work = await makeHome('hangar-recovery-');
    const tiny = tinyLlm();
    await writeFile(path.join(work, 'crashy.py'), CRASH_ON_RESTART);
    await writeFile(path.join(work, 'sleeper.py'), SLEEPER);
    server = await startServer({ env: { HANGAR_RESTART_FIRST_DELAY_MS: '200', HANGAR_RESTART_LIMIT: '3' } });
    api = client(server.url);
    expect((await api.post('/v1/model_registrations/LLM', tinyLlmRegistration('tiny-chat', tiny.path))).status).toBe(200);
    const crashy = { model_name: 'crashy', model_uri: path.join(work, 'crashy.py'), launcher: 'python', launcher_args: { marker: path.join(work, 'started') } };
    expect((await api.post('/v1/model_registrations/flexible', { model: crashy, persist: false })).status).toBe(200);
    const sleeper = { model_name: 'sleeper', model_uri: path.join(work, 'sleeper.py'), launcher: 'python' };
    expect((await api.post('/v1/model_registrations/flexible', { model: sleeper, persist: false })).status).toBe(200);
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    await removeHome(server.home);
    await removeHome(work);
  });

  it('fails 4 streams at once when their runtime is SIGKILLed, then serves again after the restart', async () => {
    expect((await api.post('/v1/models', { model_name: 'tiny-chat', model_engine: 'Transformers', model_uid: 'llm' })).status).toBe(200);
    const [pid] = await runtimePids(server.home);
    const body = { model: 'llm', prompt: 'Once upon a time', max_tokens: 400, temperature: 0, stream: true };
    const streams = await Promise.all(
      Array.from({ length: 4 }, () => fetch(`${server.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })),
    );
    const readers = streams.map(async (res) => {
      if (res.status !== 200) return { status: res.status, error: true, endedAt: performance.now() };
      const text = await res.text();
      return { status: 200, error: text.includes('"error"'), done: text.includes('[DONE]'), endedAt: performance.now() };
    });
    process.kill(pid!, 'SIGKILL');
    const killedAt = performance.now();
    const outcomes = await Promise.all(readers);
    for (const outcome of outcomes) {
      expect(outcome.error, JSON.stringify(outcome)).toBe(true);
      expect(outcome.endedAt - killedAt).toBeLessThan(1000);
    }
    const back = await waitFor(async () => (await api.post('/v1/completions', { model: 'llm', prompt: 'Hi', max_tokens: 2 })).status === 200, 60_000);
    expect(back).toBe(true);
    const events = (await api.get('/v1/models/llm/events')).body.map((e: any) => e.event_content);
    expect(events.some((e: string) => e.includes('died') && e.includes('SIGKILL'))).toBe(true);
    expect(events).toContain('Replica llm-0 restarted');
    expect((await api.delete('/v1/models/llm')).status).toBe(200);
  }, 120_000);

  it('notices a frozen runtime within about a second, fails its call, kills it and restarts it', async () => {
    expect((await api.post('/v1/models', { model_name: 'sleeper', model_type: 'flexible', model_uid: 'sleeper' })).status).toBe(200);
    const [pid] = await runtimePids(server.home);
    const call = api.post('/v1/flexible/infers', { model: 'sleeper', seconds: 30 });
    await new Promise((resolve) => setTimeout(resolve, 300)); // the call is in the runtime
    // SIGSTOP freezes every thread, libzmq's too: what a hung machine or a cut
    // network looks like. The PING/PONG heartbeat would take 10 s to notice.
    process.kill(pid!, 'SIGSTOP');
    const frozenAt = performance.now();
    try {
      const res = await call;
      expect(res.status).toBe(503);
      expect(res.body.detail).toContain('stopped answering on its connection');
      expect(performance.now() - frozenAt).toBeLessThan(3000);
      expect(await waitFor(async () => !isAlive(pid!), 15_000)).toBe(true);
    } finally {
      if (isAlive(pid!)) process.kill(pid!, 'SIGKILL');
    }
    const back = await waitFor(async () => (await api.post('/v1/flexible/infers', { model: 'sleeper' })).status === 200, 60_000);
    expect(back).toBe(true);
    const events = (await api.get('/v1/models/sleeper/events')).body.map((e: any) => e.event_content);
    expect(events.some((e: string) => e.includes('died') && e.includes('no ZMTP heartbeat'))).toBe(true);
    expect((await api.delete('/v1/models/sleeper')).status).toBe(200);
    expect(await runtimePids(server.home)).toEqual([]);
  }, 90_000);

  it('gives up on a runtime that crashes on every start, with the reason, leaving no process', async () => {
    expect((await api.post('/v1/models', { model_name: 'crashy', model_type: 'flexible', model_uid: 'crashy' })).status).toBe(200);
    const [pid] = await runtimePids(server.home);
    expect((await api.post('/v1/flexible/infers', { model: 'crashy', action: 'crash' })).status).toBe(503);
    const gaveUp = await waitFor(async () => (await api.get('/v1/models/instances?model_uid=crashy')).body[0]?.status === 'ERROR', 30_000);
    expect(gaveUp).toBe(true);
    const instance = (await api.get('/v1/models/instances?model_uid=crashy')).body[0];
    expect(instance.error_message).toContain('restarted 3 times');
    expect(instance.error_message).toContain('refusing to start again');
    expect(isAlive(pid!)).toBe(false);
    expect(await runtimePids(server.home)).toEqual([]);
    // No dead process's pid, which may be another process's by now.
    expect((await api.get('/v1/models/crashy/replicas')).body.map((r: { pid: unknown }) => r.pid)).toEqual([null]);
    const events = (await api.get('/v1/models/crashy/events')).body.map((e: any) => e.event_content);
    expect(events.filter((e: string) => e.startsWith('Restart of replica crashy-0 failed'))).toHaveLength(3);
    // A caller reads that it is down and why, not the runtime's own output (the operator's, above).
    const down = await api.post('/v1/flexible/infers', { model: 'crashy' });
    expect(down.status).toBe(503);
    expect(down.body.error.message).toContain('restarted 3 times');
    expect(down.body.error.message).not.toContain('refusing to start again');
    expect(down.body.error.message).not.toContain('its last output');
    // Repaired, it is restored as it ran (a 404 said it was neither saved nor running).
    await rm(path.join(work, 'started'));
    const restored = await api.post('/v1/models/crashy/restore', {});
    expect([restored.status, restored.body.model_uid], restored.text).toEqual([200, 'crashy']);
    expect((await api.post('/v1/flexible/infers', { model: 'crashy' })).status).toBe(200);
    expect((await api.delete('/v1/models/crashy')).status).toBe(200);
  }, 60_000);
});

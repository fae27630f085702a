import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, request } from './harness/http.js';
import { isAlive, processPids, waitFor } from './harness/processes.js';
import { makeHome, removeHome, startServer, type TestServer } from './harness/server.js';

// A flexible model whose load takes `load_s` seconds, so a start can be caught midway.
const SLOW_LOAD = `import time

def load(load_s=0):
    time.sleep(load_s)
    return {}

def infer(model, value=0, sleep_s=0):
    time.sleep(sleep_s)
    return {"value": value}
`;

type ReplicaRecord = { replica_id: number; pid: number | null; status: string };

/**
 * Removing a replica (DELETE /v1/models/{uid}/replicas/{id}) while it starts, restarts
 * after a crash, or waits to restart: it goes, nothing starts it again, no runtime is
 * left, and the service stays up. Before 2026-11-29 the second of these ended the whole
 * control plane (an unhandled state error), the third left a runtime running unlisted,
 * and the first answered the add with a 500 after the whole load.
 */
describe('removing a replica that is not READY', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  let work: string;

  const replicas = async (uid: string): Promise<ReplicaRecord[]> => (await api.get(`/v1/models/${uid}/replicas`)).body as ReplicaRecord[];
  const runtimesOf = (replicaUid: string) => processPids(({ cmdline }) => cmdline.includes('hangar_runtime') && cmdline.includes(`--replica=${replicaUid}`));

  beforeAll(async () => {
    work = await makeHome('hangar-replica-removal-');
    const launcher = path.join(work, 'slow_load.py');
    await writeFile(launcher, SLOW_LOAD);
    server = await startServer({ env: { HANGAR_RESTART_FIRST_DELAY_MS: '1500' } });
    api = client(server.url);
    for (const [name, seconds] of [['quick', 0], ['slow', 4]] as const) {
      const reg = await api.post('/v1/model_registrations/flexible', { model: { model_name: name, model_uri: launcher, launcher: 'python', launcher_args: { load_s: seconds } }, persist: false });
      expect(reg.status, reg.text).toBe(200);
    }
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    if (server) await removeHome(server.home);
    await removeHome(work);
  });

  it('drops a restart that is pending: nothing starts it again, no runtime is left', async () => {
    expect((await api.post('/v1/models', { model_name: 'quick', model_type: 'flexible', model_uid: 'pending', replica: 2 })).status).toBe(200);
    const pid = (await replicas('pending')).find((r) => r.replica_id === 1)!.pid!;
    process.kill(pid, 'SIGKILL');
    expect(await waitFor(async () => (await replicas('pending')).some((r) => r.replica_id === 1 && r.status === 'ERROR'), 10_000)).toBe(true);
    const removed = await request(server.url, 'DELETE', '/v1/models/pending/replicas/1');
    expect(removed.body, removed.text).toEqual({ result: true, remaining_replicas: 1 });
    // Past the restart's delay: no restart came.
    await new Promise((r) => setTimeout(r, 3_000));
    expect(await runtimesOf('pending-1')).toEqual([]);
    const events = ((await api.get('/v1/models/pending/events')).body as Array<{ event_content: string }>).map((e) => e.event_content);
    expect(events.some((e) => e.includes('Replica pending-1 restarted'))).toBe(false);
    expect((await api.post('/v1/flexible/infers', { model: 'pending', value: 3 })).body).toEqual({ value: 3 });
  }, 60_000);

  it('stops a restart that is loading, and the service stays up', async () => {
    expect((await api.post('/v1/models', { model_name: 'slow', model_type: 'flexible', model_uid: 'loading', replica: 2 })).status).toBe(200);
    const pid = (await replicas('loading')).find((r) => r.replica_id === 1)!.pid!;
    process.kill(pid, 'SIGKILL');
    // The restart's load takes 4 s: caught in it.
    expect(await waitFor(async () => (await replicas('loading')).some((r) => r.replica_id === 1 && r.status === 'CREATING'), 10_000)).toBe(true);
    const started = Date.now();
    const removed = await request(server.url, 'DELETE', '/v1/models/loading/replicas/1');
    expect(removed.body, removed.text).toEqual({ result: true, remaining_replicas: 1 });
    expect(Date.now() - started).toBeLessThan(3_500);
    expect(server.process.exitCode).toBeNull();
    expect((await api.get('/status')).status).toBe(200);
    expect(await waitFor(async () => (await runtimesOf('loading-1')).length === 0, 10_000)).toBe(true);
  }, 60_000);

  it('launches again, with the same parameters, a uid that is being terminated, once it is gone', async () => {
    const launch = { model_name: 'quick', model_type: 'flexible', model_uid: 'again' };
    expect((await api.post('/v1/models', launch)).status).toBe(200);
    const busy = api.post('/v1/flexible/infers', { model: 'again', sleep_s: 3 });
    await new Promise((r) => setTimeout(r, 300));
    const terminating = request(server.url, 'DELETE', '/v1/models/again');
    const statusOf = async () => ((await api.get('/v1/models/instances?model_uid=again')).body as Array<{ status: string }>)[0]?.status;
    expect(await waitFor(async () => (await statusOf()) === 'TERMINATING', 5_000)).toBe(true);
    // Before, a 409 "already in the model list", and then the uid was gone: the client had to guess when to retry.
    const relaunched = await api.post('/v1/models', launch);
    expect(relaunched.status, relaunched.text).toBe(200);
    expect((await terminating).status).toBe(200);
    await busy;
    expect(await statusOf()).toBe('READY');
    expect((await api.post('/v1/flexible/infers', { model: 'again', value: 5 })).body).toEqual({ value: 5 });
  }, 60_000);

  it('cancels an add whose replica is removed while it starts: the add answers launch_cancelled, soon', async () => {
    const adding = api.post('/v1/models/loading/replicas', {});
    let id = -1;
    expect(await waitFor(async () => (id = (await replicas('loading')).find((r) => r.status === 'CREATING')?.replica_id ?? -1) >= 0, 10_000)).toBe(true);
    const started = Date.now();
    const removed = await request(server.url, 'DELETE', `/v1/models/loading/replicas/${id}`);
    expect(removed.status, removed.text).toBe(200);
    const added = await adding;
    expect([added.status, added.body.error?.code], added.text).toEqual([499, 'launch_cancelled']);
    expect(Date.now() - started).toBeLessThan(3_500);
    expect((await replicas('loading')).map((r) => r.replica_id)).toEqual([0]);
    expect(await waitFor(async () => (await runtimesOf(`loading-${id}`)).length === 0, 10_000)).toBe(true);
  }, 60_000);
});

import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writePythonLauncher } from './harness/fixtures.js';
import { client } from './harness/http.js';
import { isAlive, runtimePids, waitFor } from './harness/processes.js';
import { makeHome, removeHome, startServer, type TestServer } from './harness/server.js';

/** Pids of this server's runtimes that are (or were started as) warm spares. */
async function sparePids(home: string): Promise<number[]> {
  const pids = await runtimePids(home);
  return pids.filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').some((arg) => arg.startsWith('--replica=spare-'));
    } catch {
      return false;
    }
  });
}

async function registerAndLaunch(api: ReturnType<typeof client>, launcherFile: string, uid: string): Promise<number> {
  const definition = { model_name: `scaler-${uid}`, model_uri: launcherFile, launcher: 'python', launcher_args: '{"scale": 2}' };
  expect((await api.post('/v1/model_registrations/flexible', { model: JSON.stringify(definition), persist: false })).status).toBe(200);
  const launch = await api.post('/v1/models', { model_name: `scaler-${uid}`, model_type: 'flexible', model_uid: uid });
  expect(launch.status, launch.text).toBe(200);
  const answer = await api.post('/v1/flexible/infers', { model: uid, args: [[1, 2]] });
  expect(answer.status, answer.text).toBe(200);
  expect(answer.body.values).toEqual([2, 4]);
  return answer.body.pid as number;
}

// The warm spare is on by default; the harness turns it off for other tests, so
// these start the server with HANGAR_WARM_SPARE empty (= the default).
describe('warm spare runtime', () => {
  let work: string;
  let launcherFile: string;
  const servers: TestServer[] = [];

  beforeAll(async () => {
    work = await makeHome('hangar-spare-fixtures-');
    launcherFile = await writePythonLauncher(work);
  });

  afterAll(async () => {
    for (const server of servers) {
      await server.kill();
      await removeHome(server.home);
    }
    await removeHome(work);
  });

  it('is on by default: a launch takes the spare, a new one warms, shutdown stops both', async () => {
    const server = await startServer({ env: { HANGAR_WARM_SPARE: '' } });
    servers.push(server);
    const api = client(server.url);
    expect(await waitFor(async () => (await sparePids(server.home)).length === 1, 15_000)).toBe(true);
    const [spare] = await sparePids(server.home);

    const pid = await registerAndLaunch(api, launcherFile, 'first');
    expect(pid).toBe(spare); // the model runs in the process that was already there
    const instances = await api.get('/v1/models/instances?model_uid=first');
    expect(instances.body[0].replica_statuses[0].pid).toBe(spare);
    expect(server.logs.some((l) => l.msg === 'launch takes the warm spare runtime' && l.model_uid === 'first')).toBe(true);

    // The next spare warms once that launch is done: two runtimes, the model's and the new spare.
    expect(await waitFor(async () => (await runtimePids(server.home)).length === 2, 15_000)).toBe(true);
    const [next] = (await sparePids(server.home)).filter((p) => p !== spare);
    expect(next).toBeDefined();
    expect(await registerAndLaunch(api, launcherFile, 'second')).toBe(next);

    // Terminating a model leaves the spare machinery alone; SIGTERM stops everything.
    expect((await api.delete('/v1/models/first')).status).toBe(200);
    expect(isAlive(spare!)).toBe(false);
    expect(await waitFor(async () => (await runtimePids(server.home)).length === 2, 15_000)).toBe(true);
    await server.stop();
    expect(server.process.exitCode).toBe(0);
    expect(await runtimePids(server.home)).toEqual([]);
    // Nor are their socket files left in the run folder, the last spare's included.
    const run = path.join(server.home, 'run');
    expect(existsSync(run) ? readdirSync(run) : []).toEqual([]);
  });

  it('starts the launch cold when the spare it took dies before the load begins', async () => {
    // A frozen spare stands for one stuck importing torch on a cold, busy host (its
    // loading holds Python's lock past the heartbeat timeout): the launch must not fail for it.
    const server = await startServer({ env: { HANGAR_WARM_SPARE: '' } });
    servers.push(server);
    const api = client(server.url);
    expect(await waitFor(async () => (await sparePids(server.home)).length === 1, 15_000)).toBe(true);
    const [spare] = await sparePids(server.home);
    // Frozen once it has said HELLO: it maps torch's libraries only after (its --preload).
    expect(await waitFor(async () => readFileSync(`/proc/${spare}/maps`, 'utf8').includes('torch'), 30_000)).toBe(true);
    process.kill(spare!, 'SIGSTOP');
    const pid = await registerAndLaunch(api, launcherFile, 'after-frozen');
    expect(pid).not.toBe(spare);
    expect(server.logs.some((l) => l.msg === 'the warm spare died before it began the load; starting cold' && l.model_uid === 'after-frozen')).toBe(true);
    expect(await waitFor(async () => !isAlive(spare!), 15_000)).toBe(true);
  }, 60_000);

  it('never outlives a control plane killed with SIGKILL', async () => {
    const server = await startServer({ env: { HANGAR_WARM_SPARE: '' } });
    servers.push(server);
    expect(await waitFor(async () => (await sparePids(server.home)).length === 1, 15_000)).toBe(true);
    await server.kill();
    // The spare's watchdog sees its parent gone within half a second.
    expect(await waitFor(async () => (await runtimePids(server.home)).length === 0, 5000)).toBe(true);
    // Its socket files stay (nobody was left to remove them) until the next start on
    // this home finds that nothing answers on them.
    const run = path.join(server.home, 'run');
    const stale = readdirSync(run);
    expect(stale.length).toBeGreaterThan(0);
    const next = await startServer({ home: server.home, env: { HANGAR_WARM_SPARE: '' } });
    servers.push(next);
    expect(await waitFor(async () => (await sparePids(next.home)).length === 1, 15_000)).toBe(true);
    expect(readdirSync(run).filter((name) => stale.includes(name))).toEqual([]);
    expect(readdirSync(run).length).toBeGreaterThan(0); // the new spare's, alive, are kept
  }, 60_000);

  it('is off with --no-warm-spare (and with HANGAR_WARM_SPARE=0)', async () => {
    for (const options of [{ args: ['--no-warm-spare'], env: { HANGAR_WARM_SPARE: '' } }, { env: { HANGAR_WARM_SPARE: '0' } }]) {
      const server = await startServer(options);
      servers.push(server);
      const api = client(server.url);
      const pid = await registerAndLaunch(api, launcherFile, 'cold');
      // Nothing was warmed before the launch or after it: the model's process is the only one.
      await new Promise((r) => setTimeout(r, 1500));
      expect(await runtimePids(server.home)).toEqual([pid]);
      expect(await sparePids(server.home)).toEqual([]);
      await server.stop();
    }
  });
});

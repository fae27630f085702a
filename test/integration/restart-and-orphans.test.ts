import { existsSync, readFileSync } from 'node:fs';
import { readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tinySklearn, writePythonLauncher } from './harness/fixtures.js';
import { client } from './harness/http.js';
import { isAlive, runtimePids, waitFor } from './harness/processes.js';
import { makeHome, removeHome, startServer } from './harness/server.js';

// /proc/<pid>/stat fields 5, 6 and 41: process group, session and the main thread's
// scheduling policy (0 SCHED_OTHER, 5 SCHED_IDLE).
function schedulingOf(pid: number): { pgrp: number; session: number; policy: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { pgrp: Number(fields[2]), session: Number(fields[3]), policy: Number(fields[38]) };
}
const SCHED_OTHER = 0;
const SCHED_IDLE = 5;

describe('state across restarts, and no orphans', () => {
  let work: string;
  let launcherFile: string;
  let modelPath: string;

  beforeAll(async () => {
    work = await makeHome('hangar-fixtures-');
    launcherFile = await writePythonLauncher(work);
    modelPath = tinySklearn().modelPath;
  });
  afterAll(async () => removeHome(work));

  it('keeps persisted custom registrations across a restart; unregister removes the file', async () => {
    const home = await makeHome();
    try {
      let server = await startServer({ home });
      let api = client(server.url);
      const definition = { model_name: 'kept-scaler', model_uri: launcherFile, launcher: 'python', launcher_args: '{"scale": 2}' };
      expect((await api.post('/v1/model_registrations/flexible', { model: JSON.stringify(definition), persist: true })).status).toBe(200);
      const file = path.join(home, 'model', 'v2', 'flexible', 'kept-scaler.json');
      expect(existsSync(file)).toBe(true);
      // Not persisted: gone after the restart.
      const transient = { model_name: 'transient-clf', model_uri: modelPath, launcher: 'sklearn' };
      expect((await api.post('/v1/model_registrations/flexible', { model: transient, persist: false })).status).toBe(200);
      await server.stop();

      server = await startServer({ home });
      api = client(server.url);
      const names = (await api.get('/v1/model_registrations/flexible')).body.map((r: any) => r.model_name);
      expect(names).toContain('kept-scaler');
      expect(names).not.toContain('transient-clf');
      const record = await api.get('/v1/model_registrations/flexible/kept-scaler');
      expect(record.status).toBe(200);
      expect(record.body).toMatchObject({ model_name: 'kept-scaler', launcher: 'python' });

      // The restored registration launches and serves.
      expect((await api.post('/v1/models', { model_name: 'kept-scaler', model_type: 'flexible' })).status).toBe(200);
      expect((await api.post('/v1/flexible/infers', { model: 'kept-scaler', args: [[5]] })).body.values).toEqual([10]);
      expect((await api.delete('/v1/models/kept-scaler')).status).toBe(200);

      expect((await api.delete('/v1/model_registrations/flexible/kept-scaler')).status).toBe(200);
      expect(existsSync(file)).toBe(false);
      expect((await api.get('/v1/model_registrations/flexible/kept-scaler')).status).toBe(404);
      const left = await readdir(path.dirname(file));
      expect(left).toEqual([]);
      await server.stop();
    } finally {
      await removeHome(home);
    }
  });

  it('ends what an engine started when its runtime dies, is stopped, or loses its control plane', async () => {
    // Like vLLM's EngineCore: a child process of the runtime that holds resources.
    const spawner = path.join(work, 'spawner.py');
    await writeFile(spawner, `import subprocess\n\ndef load():\n    return subprocess.Popen(["sleep", "300"])\n\ndef infer(child):\n    return child.pid\n`);
    const server = await startServer();
    try {
      const api = client(server.url);
      const definition = { model_name: 'spawner', model_uri: spawner, launcher: 'python' };
      expect((await api.post('/v1/model_registrations/flexible', { model: definition, persist: false })).status).toBe(200);
      const childOf = async (uid: string): Promise<number> => (await api.post('/v1/flexible/infers', { model: uid })).body as number;

      // 1. The runtime is SIGKILLed: the control plane ends its group.
      expect((await api.post('/v1/models', { model_name: 'spawner', model_type: 'flexible', model_uid: 'killed' })).status).toBe(200);
      const child1 = await childOf('killed');
      expect(isAlive(child1)).toBe(true);
      const runtime1 = (await api.get('/v1/models/killed/replicas')).body[0].pid as number;
      const argv = readFileSync(`/proc/${runtime1}/cmdline`, 'utf8').split('\0');
      const dataFile = argv[argv.indexOf('--data') + 1]!.replace(/^ipc:\/\//, '');
      expect(existsSync(dataFile), dataFile).toBe(true);
      process.kill(runtime1, 'SIGKILL');
      expect(await waitFor(() => !isAlive(child1), 5_000), `engine child ${child1} outlived its runtime`).toBe(true);
      // Nor do its socket files stay behind, though nobody stopped it.
      expect(await waitFor(() => !existsSync(dataFile), 5_000), `${dataFile} outlived its runtime`).toBe(true);
      await api.delete('/v1/models/killed');

      // 2. Terminated: the child goes with it.
      expect((await api.post('/v1/models', { model_name: 'spawner', model_type: 'flexible', model_uid: 'stopped' })).status).toBe(200);
      const child2 = await childOf('stopped');
      expect((await api.delete('/v1/models/stopped')).status).toBe(200);
      expect(await waitFor(() => !isAlive(child2), 5_000), `engine child ${child2} outlived a terminate`).toBe(true);

      // 3. The control plane is SIGKILLed: the runtime ends its own group as it exits.
      expect((await api.post('/v1/models', { model_name: 'spawner', model_type: 'flexible', model_uid: 'orphaned' })).status).toBe(200);
      const child3 = await childOf('orphaned');
      await server.kill();
      expect(await waitFor(() => !isAlive(child3), 10_000), `engine child ${child3} outlived the control plane`).toBe(true);
    } finally {
      await server.kill();
      await removeHome(server.home);
    }
  });

  it.runIf(process.platform === 'linux')('runs a CPU engine in our session under SCHED_IDLE, and the simulator in a session of its own at its own priority', async () => {
    // docs/runtime-protocol.md, "CPU priority": a new session is a new autogroup, where
    // the engine's lower priority would not rank it below the control plane's threads.
    const server = await startServer();
    try {
      const api = client(server.url);
      const definition = { model_name: 'scaler', model_uri: launcherFile, launcher: 'python' };
      expect((await api.post('/v1/model_registrations/flexible', { model: definition, persist: false })).status).toBe(200);
      expect((await api.post('/v1/models', { model_name: 'scaler', model_type: 'flexible', model_uid: 'cpu' })).status).toBe(200);
      const sim = await api.post('/v1/models', { model_name: 'simulator', model_type: 'LLM', model_engine: 'simulator', model_uid: 'sim', step_ms: 5 });
      expect(sim.status, sim.text).toBe(200);
      const ours = schedulingOf(server.process.pid!);
      const cpuPid = (await api.get('/v1/models/cpu/replicas')).body[0].pid as number;
      const simPid = (await api.get('/v1/models/sim/replicas')).body[0].pid as number;
      expect(schedulingOf(cpuPid)).toEqual({ pgrp: cpuPid, session: ours.session, policy: SCHED_IDLE });
      expect(schedulingOf(simPid)).toEqual({ pgrp: simPid, session: simPid, policy: SCHED_OTHER });
      // Both still serve, and their groups still end with them.
      expect((await api.post('/v1/flexible/infers', { model: 'cpu', args: [[5]] })).status).toBe(200);
      expect((await api.delete('/v1/models/cpu')).status).toBe(200);
      expect((await api.delete('/v1/models/sim')).status).toBe(200);
      expect(await waitFor(() => !isAlive(cpuPid) && !isAlive(simPid), 10_000)).toBe(true);
    } finally {
      await server.stop();
      await removeHome(server.home);
    }
  });

  it('leaves no runtime alive 10 s after the control plane is SIGKILLed', async () => {
    const server = await startServer();
    try {
      const api = client(server.url);
      const definition = { model_name: 'orphan-check', model_uri: launcherFile, launcher: 'python' };
      expect((await api.post('/v1/model_registrations/flexible', { model: definition, persist: false })).status).toBe(200);
      expect((await api.post('/v1/models', { model_name: 'orphan-check', model_type: 'flexible', replica: 2 })).status).toBe(200);
      const pids = await runtimePids(server.home);
      expect(pids).toHaveLength(2);

      await server.kill();
      const allGone = await waitFor(() => pids.every((pid) => !isAlive(pid)), 10_000);
      expect(allGone, `still alive: ${pids.filter(isAlive).join(', ')}`).toBe(true);
    } finally {
      await server.kill();
      await removeHome(server.home);
    }
  });
});

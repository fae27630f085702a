import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from './harness/http.js';
import { tinySklearn, writePythonLauncher, type SklearnFixture } from './harness/fixtures.js';
import { tinyModel } from './harness/tiny-models.js';
import { isAlive, runtimePids, waitFor } from './harness/processes.js';
import { makeHome, removeHome, startServer, type TestServer } from './harness/server.js';

// register -> list registrations -> launch -> list running -> infer -> terminate,
// with a real server, real Python runtimes and models the test makes itself.
describe('flexible models end to end', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  let work: string;
  let sklearn: SklearnFixture;
  let launcherFile: string;

  beforeAll(async () => {
    work = await makeHome('hangar-fixtures-');
    sklearn = tinySklearn();
    launcherFile = await writePythonLauncher(work);
    server = await startServer();
    api = client(server.url);
  });

  afterAll(async () => {
    await server?.stop();
    await removeHome(server.home);
    await removeHome(work);
  });

  it('serves an sklearn model it trained itself, then terminates it', async () => {
    const definition = { model_name: 'blob-classifier', model_uri: sklearn.modelPath, launcher: 'sklearn', launcher_args: '{}', model_description: 'three blobs' };
    expect((await api.post('/v1/model_registrations/flexible', { model: JSON.stringify(definition), persist: false })).status).toBe(200);

    const regs = await api.get('/v1/model_registrations/flexible');
    expect(regs.body).toContainEqual({ model_name: 'blob-classifier', is_builtin: false });

    const launch = await api.post('/v1/models', { model_name: 'blob-classifier', model_type: 'flexible', model_uid: 'clf' });
    expect(launch.status, launch.text).toBe(200);
    expect(launch.body).toEqual({ model_uid: 'clf' });

    const models = await api.get('/v1/models');
    const listed = models.body.data.find((m: any) => m.id === 'clf');
    expect(listed).toMatchObject({ object: 'model', model_type: 'flexible', model_name: 'blob-classifier', launcher: 'sklearn', replica: 1 });

    const instances = await api.get('/v1/models/instances?model_uid=clf');
    expect(instances.body).toHaveLength(1);
    expect(instances.body[0]).toMatchObject({ model_uid: 'clf', status: 'READY', replica: 1 });
    const pid = instances.body[0].replica_statuses[0].pid as number;
    expect(isAlive(pid)).toBe(true);

    const predicted = await api.post('/v1/flexible/infers', { model: 'clf', args: [sklearn.rows] });
    expect(predicted.status, predicted.text).toBe(200);
    expect(predicted.body).toEqual(sklearn.predictions);
    expect(Number(predicted.headers.get('x-hangar-overhead-ms'))).toBeGreaterThanOrEqual(0);
    expect(predicted.headers.get('x-request-id')).toBeTruthy();

    const proba = await api.post('/v1/flexible/infers', { model: 'clf', args: [sklearn.rows], method: 'predict_proba' });
    expect(proba.status, proba.text).toBe(200);
    (proba.body as number[][]).forEach((row, i) => row.forEach((p, j) => expect(p).toBeCloseTo(sklearn.proba[i]![j]!, 10)));

    expect((await api.get('/v1/models/clf/progress')).body).toEqual({ progress: 1 });
    const events = (await api.get('/v1/models/clf/events')).body.map((e: any) => e.event_content);
    expect(events).toContain('Launch model');

    const terminated = await api.delete('/v1/models/clf');
    expect(terminated.status).toBe(200);
    expect(terminated.body).toBeNull();
    expect(isAlive(pid)).toBe(false);
    expect((await api.get('/v1/models')).body.data.find((m: any) => m.id === 'clf')).toBeUndefined();
    // A uid not launching or running reads progress 0, never an error (Xinference 2.0).
    expect((await api.get('/v1/models/clf/progress')).body).toEqual({ progress: 0 });
    expect((await api.get('/v1/models/instances?model_uid=clf')).body).toEqual([]);
    expect((await api.get('/v1/models/clf')).status).toBe(404);
  });

  it('serves a user python launcher module with its launcher_args', async () => {
    const definition = { model_name: 'scaler', model_uri: launcherFile, launcher: 'python', launcher_args: JSON.stringify({ scale: 3, offset: 1 }) };
    expect((await api.post('/v1/model_registrations/flexible', { model: JSON.stringify(definition), persist: false })).status).toBe(200);
    const launch = await api.post('/v1/models', { model_name: 'scaler', model_type: 'flexible' });
    expect(launch.status, launch.text).toBe(200);
    expect(launch.body.model_uid).toBe('scaler');

    const out = await api.post('/v1/flexible/infers', { model: 'scaler', args: [[1, 2, 3]] });
    expect(out.status, out.text).toBe(200);
    expect(out.body.values).toEqual([4, 7, 10]);
    const squared = await api.post('/v1/flexible/infers', { model: 'scaler', args: [[1, 2]], square: true });
    expect(squared.body.values).toEqual([16, 49]);

    const pid = out.body.pid as number;
    expect((await runtimePids(server.home))).toContain(pid);
    expect((await api.delete('/v1/models/scaler')).status).toBe(200);
    expect(isAlive(pid)).toBe(false);
  });

  it("serves Xinference's transformers launcher as a pipeline: infer calls it", async () => {
    // Xinference's documented flexible example, its dotted launcher name included, on a
    // tiny real classifier. It used to launch the LLM engine, and every infer was a 400.
    const classifier = tinyModel<{ path: string }>('cross-encoder');
    const definition = { model_name: 'sentiment', model_uri: classifier.path, launcher: 'xinference.model.flexible.launchers.transformers', launcher_args: JSON.stringify({ task: 'text-classification' }) };
    expect((await api.post('/v1/model_registrations/flexible', { model: JSON.stringify(definition), persist: false })).status).toBe(200);
    const launch = await api.post('/v1/models', { model_name: 'sentiment', model_type: 'flexible' });
    expect(launch.status, launch.text).toBe(200);
    const out = await api.post('/v1/flexible/infers', { model: 'sentiment', args: [['I love it', 'I hate it']] });
    expect(out.status, out.text).toBe(200);
    expect(out.body).toEqual([
      { label: expect.any(String), score: expect.any(Number) },
      { label: expect.any(String), score: expect.any(Number) },
    ]);
    // Keywords go to the pipeline too; one it does not take is the request's fault.
    expect((await api.post('/v1/flexible/infers', { model: 'sentiment', args: ['I love it'], top_k: 1 })).status).toBe(200);
    const bad = await api.post('/v1/flexible/infers', { model: 'sentiment', args: [42] });
    expect([bad.status, bad.body.error?.code], bad.text).toEqual([400, 'inference_invalid_input']);
    expect((await api.delete('/v1/models/sentiment')).status).toBe(200);
    expect((await api.delete('/v1/model_registrations/flexible/sentiment')).status).toBe(200);
  }, 120_000);

  it('starts one process for two concurrent identical launches', async () => {
    const body = { model_name: 'scaler', model_type: 'flexible', model_uid: 'twin' };
    const [a, b] = await Promise.all([api.post('/v1/models', body), api.post('/v1/models', body)]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(a.body).toEqual({ model_uid: 'twin' });
    expect(b.body).toEqual({ model_uid: 'twin' });
    const instance = (await api.get('/v1/models/instances?model_uid=twin')).body[0];
    expect(instance.replica_statuses).toHaveLength(1);
    expect(await runtimePids(server.home)).toHaveLength(1);

    const different = await api.post('/v1/models', { ...body, replica: 2 });
    expect(different.status).toBe(409);
    expect(different.body.detail).toContain('twin');
    expect((await api.delete('/v1/models/twin')).status).toBe(200);
    expect(await waitFor(async () => (await runtimePids(server.home)).length === 0, 5000)).toBe(true);
  });

  it('runs replica=2 as two processes and round-robins calls over them', async () => {
    const launch = await api.post('/v1/models', { model_name: 'scaler', model_type: 'flexible', model_uid: 'pair', replica: 2 });
    expect(launch.status, launch.text).toBe(200);
    const replicas = (await api.get('/v1/models/pair/replicas')).body;
    expect(replicas.map((r: any) => r.replica_model_uid)).toEqual(['pair-0', 'pair-1']);
    const pids = replicas.map((r: any) => r.pid as number);
    expect(new Set(pids).size).toBe(2);
    expect((await runtimePids(server.home)).sort()).toEqual([...pids].sort());

    const answeredBy: number[] = [];
    for (let i = 0; i < 6; i++) answeredBy.push((await api.post('/v1/flexible/infers', { model: 'pair', args: [[i]] })).body.pid);
    expect(new Set(answeredBy)).toEqual(new Set(pids));
    for (let i = 2; i < answeredBy.length; i++) expect(answeredBy[i]).toBe(answeredBy[i - 2]);
    expect(answeredBy[0]).not.toBe(answeredBy[1]);

    expect((await api.delete('/v1/models/pair')).status).toBe(200);
    for (const pid of pids) expect(isAlive(pid)).toBe(false);
  });
});

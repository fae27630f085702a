import { statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, request } from './harness/http.js';
import { waitFor } from './harness/processes.js';
import { makeHome, removeHome, startServer, type TestServer } from './harness/server.js';

/** The autostart list survives restarts and launches its models at every start. */
describe('autostart models (real server, restarted)', () => {
  let server: TestServer;
  let home: string;
  const api = () => client(server.url);
  const running = async (): Promise<string[]> => ((await api().get('/v1/models')).body.data as Array<{ id: string }>).map((m) => m.id);

  beforeAll(async () => {
    home = await makeHome('hangar-autostart-');
    server = await startServer({ home });
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    await removeHome(home);
  });

  it('keeps a checked launch, without starting it now', async () => {
    const added = await api().post('/v1/autostart/models', { model_name: 'simulator', model_engine: 'simulator', model_uid: 'auto-sim', step_ms: 5, envs: { HF_TOKEN: 'hf_secret_value' } });
    expect(added.status, added.text).toBe(200);
    expect(added.body).toEqual({ model_uid: 'auto-sim' });
    const list = await api().get('/v1/autostart/models');
    expect(list.body.list).toEqual([expect.objectContaining({ model_uid: 'auto-sim', model_name: 'simulator', envs: { HF_TOKEN: '[redacted]' } })]);
    expect(list.text).not.toContain('hf_secret_value');
    expect(await running()).toEqual([]);
    expect(statSync(path.join(home, 'state', 'autostart.json')).mode & 0o777).toBe(0o600);

    const bad = await api().post('/v1/autostart/models', { model_name: 'no-such-model', model_engine: 'Transformers' });
    expect(bad.status).toBe(404);
    // An engine option the next start would fail on is refused now, naming the field.
    const badOption = await api().post('/v1/autostart/models', { model_name: 'simulator', model_engine: 'simulator', model_uid: 'bad-sim', step_ms: 'fast' });
    expect(badOption.status, badOption.text).toBe(400);
    expect(badOption.body.error).toMatchObject({ code: 'invalid_field', param: 'step_ms' });
    expect((await api().get('/v1/autostart/models')).body.list).toHaveLength(1);
  });

  it('launches it at the next start, even with --no-restore', async () => {
    await server.stop();
    server = await startServer({ home, args: ['--no-restore'] });
    expect(await waitFor(async () => (await running()).includes('auto-sim'), 60_000)).toBe(true);
    expect((await api().post('/v1/chat/completions', { model: 'auto-sim', messages: [{ role: 'user', content: 'x' }], max_tokens: 2 })).status).toBe(200);
  }, 120_000);

  it('forgets it after DELETE, and 404s an unknown uid', async () => {
    expect((await api().get('/v1/autostart/models/summary')).body).toEqual({ models: [{ enabled: true, model_uid: 'auto-sim' }] });
    expect((await request(server.url, 'DELETE', '/v1/autostart/models?model_uid=auto-sim')).body).toEqual({ result: true });
    expect((await request(server.url, 'DELETE', '/v1/autostart/models?model_uid=auto-sim')).status).toBe(404);
    expect((await request(server.url, 'DELETE', '/v1/autostart/models')).status).toBe(400);
    // Xinference 2.12's spelling (its client's remove_autostart_model): the uid in the path, the summary back.
    expect((await api().post('/v1/autostart/models', { model_name: 'simulator', model_engine: 'simulator', model_uid: 'auto-sim' })).status).toBe(200);
    expect((await request(server.url, 'DELETE', '/v1/autostart/models/auto-sim')).body).toEqual({ models: [] });
    expect((await request(server.url, 'DELETE', '/v1/autostart/models/auto-sim')).status).toBe(404);
    await server.stop();
    server = await startServer({ home, args: ['--no-restore'] });
    await new Promise((r) => setTimeout(r, 1000));
    expect(await running()).toEqual([]);
  }, 120_000);
});

import { spawnSync } from 'node:child_process';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upstreamAuthConfig } from '../fixtures/auth-users.js';
import { client, request } from './harness/http.js';
import { waitFor } from './harness/processes.js';
import { makeHome, removeHome, startServer, type TestServer } from './harness/server.js';

const PID_MODEL = 'import os\n\ndef load():\n    return {}\n\ndef infer(model):\n    return {"pid": os.getpid()}\n';

/** A pid no process has now: one that just ran and ended. */
function deadPid(): number {
  return spawnSync('true').pid!;
}

async function savedUids(home: string): Promise<string[]> {
  const state = JSON.parse(await readFile(path.join(home, 'state', 'instances.json'), 'utf8')) as { instances: Array<{ uid: string }> };
  return state.instances.map((i) => i.uid).sort();
}

// Issue 29, items 3 and 5: a saved model whose registration does not load at start is
// kept (listed in ERROR, still saved) and comes back once the registration is repaired;
// temp files of an interrupted write are swept at start.
describe('saved models whose registration breaks', () => {
  let work: string;
  let home: string;
  let server: TestServer | undefined;
  let regFile: string;
  let registration: Record<string, unknown>;

  beforeAll(async () => {
    work = await makeHome('hangar-saved-');
    home = await makeHome();
    await writeFile(path.join(work, 'pid.py'), PID_MODEL);
    registration = { model_name: 'pidder', model_uri: path.join(work, 'pid.py'), launcher: 'python' };
    regFile = path.join(home, 'model', 'v2', 'flexible', 'pidder.json');
  });

  afterAll(async () => {
    await server?.stop();
    await removeHome(home);
    await removeHome(work);
  });

  async function start(): Promise<ReturnType<typeof client>> {
    server = await startServer({ home });
    return client(server.url);
  }

  it('keeps a model whose registration file is truncated, lists it in ERROR, and saves it still', async () => {
    let api = await start();
    expect((await api.post('/v1/model_registrations/flexible', { model: registration, persist: true })).status).toBe(200);
    expect((await api.post('/v1/models', { model_name: 'pidder', model_type: 'flexible', model_uid: 'kept' })).status).toBe(200);
    expect(await savedUids(home)).toEqual(['kept']);
    await server!.stop();

    const text = await readFile(regFile, 'utf8');
    await writeFile(regFile, text.slice(0, Math.floor(text.length / 2)));
    const tempName = `.pidder.json.${deadPid()}.0123456789ab.tmp`;
    await writeFile(path.join(path.dirname(regFile), tempName), '{"half": ');
    await writeFile(path.join(home, 'state', `.instances.json.${deadPid()}.ba9876543210.tmp`), '{');

    api = await start();
    expect(await readdir(path.dirname(regFile))).toEqual(['pidder.json']);
    expect((await readdir(path.join(home, 'state'))).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    const listed = await waitFor(async () => (await api.get('/v1/models')).body.data.some((m: any) => m.id === 'kept' && m.status === 'ERROR'), 10_000);
    expect(listed).toBe(true);
    const entry = (await api.get('/v1/models')).body.data.find((m: any) => m.id === 'kept');
    expect(entry.error_message).toMatch(/could not restore model kept: .*pidder/);
    const instances = (await api.get('/v1/models/instances')).body as Array<Record<string, any>>;
    expect(instances.find((i) => i.model_uid === 'kept')?.status).toBe('ERROR');
    expect((await api.get('/v1/models/kept')).body.status).toBe('ERROR');

    // Another model becomes READY: the state is written again, and keeps the broken one.
    const other = { model_name: 'other', model_uri: path.join(work, 'pid.py'), launcher: 'python' };
    expect((await api.post('/v1/model_registrations/flexible', { model: other, persist: false })).status).toBe(200);
    expect((await api.post('/v1/models', { model_name: 'other', model_type: 'flexible', model_uid: 'other' })).status).toBe(200);
    expect(await savedUids(home)).toEqual(['kept', 'other']);
    expect((await api.delete('/v1/models/other')).status).toBe(200);
    expect(await savedUids(home)).toEqual(['kept']);
    await server!.kill();
  }, 120_000);

  it('brings it back at the next start once the file is repaired', async () => {
    await writeFile(regFile, JSON.stringify(registration));
    const api = await start();
    const back = await waitFor(async () => (await api.get('/v1/models/instances?model_uid=kept')).body[0]?.status === 'READY', 30_000);
    expect(back).toBe(true);
    expect((await api.post('/v1/flexible/infers', { model: 'kept' })).status).toBe(200);
    await server!.stop();
  }, 60_000);

  it('brings it back by POST /v1/models/{uid}/restore once registered again, and forgets it on terminate', async () => {
    await writeFile(regFile, '{"model_name": "pidder", "launcher": 42}');
    const api = await start();
    await waitFor(async () => (await api.get('/v1/models/kept')).body?.status === 'ERROR', 10_000);
    expect((await api.post('/v1/models/kept/restore')).status).toBe(404);
    expect((await api.post('/v1/model_registrations/flexible', { model: registration, persist: true })).status).toBe(200);
    const restored = await api.post('/v1/models/kept/restore');
    expect(restored.status, restored.text).toBe(200);
    expect(restored.body).toEqual({ model_uid: 'kept' });
    expect((await api.post('/v1/flexible/infers', { model: 'kept' })).status).toBe(200);
    expect((await api.post('/v1/models/nobody/restore')).status).toBe(404);

    // Broken again, then terminated while broken: it is forgotten for good.
    await server!.stop();
    await writeFile(regFile, '{');
    const again = await start();
    await waitFor(async () => (await again.get('/v1/models/kept')).body?.status === 'ERROR', 10_000);
    expect((await again.delete('/v1/models/kept')).status).toBe(200);
    expect(await savedUids(home)).toEqual([]);
    expect((await again.get('/v1/models/kept')).status).toBe(404);
  }, 90_000);

  it('starts with a named pipe among the registrations, and restores a model whose file was repaired on disk', async () => {
    let api = client(server!.url);
    expect((await api.post('/v1/model_registrations/flexible', { model: registration, persist: true })).status).toBe(200);
    expect((await api.post('/v1/models', { model_name: 'pidder', model_type: 'flexible', model_uid: 'mended' })).status).toBe(200);
    await server!.stop();
    await writeFile(regFile, '{');
    // Reading a pipe blocks until someone writes to it: the start must not wait on it.
    expect(spawnSync('mkfifo', [path.join(path.dirname(regFile), 'pipe.json')]).status).toBe(0);
    api = await start();
    await waitFor(async () => (await api.get('/v1/models/mended')).body?.status === 'ERROR', 10_000);
    // Repaired in place, not through the API: the restore reads it again.
    await writeFile(regFile, JSON.stringify(registration));
    const restored = await api.post('/v1/models/mended/restore');
    expect(restored.status, restored.text).toBe(200);
    expect((await api.post('/v1/flexible/infers', { model: 'mended' })).status).toBe(200);
    expect((await api.get('/v1/model_registrations/flexible/pidder')).status).toBe(200);
  }, 90_000);
});

// Issue 29, items 4 and 6, with authentication on (the upstream users, plus one who may register).
describe('registrations and tokens with authentication on', () => {
  let work: string;
  let server: TestServer | undefined;
  let configFile: string;
  const ADMIN = 'sk-3sjLbdwqAhhAF';
  const REGISTRAR = 'sk-RgstrRgstr123';
  const as = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });

  function config(registrarPermissions: string[]) {
    const base = upstreamAuthConfig();
    base.user_config.push({ username: 'registrar', password: 'pass4', permissions: registrarPermissions, api_keys: [REGISTRAR] });
    return base;
  }

  beforeAll(async () => {
    work = await makeHome('hangar-owned-');
    configFile = path.join(work, 'auth.json');
    await writeFile(configFile, JSON.stringify(config(['models:list', 'models:start', 'models:register'])));
    await writeFile(path.join(work, 'pid.py'), PID_MODEL);
    await mkdir(path.join(work, 'weights'));
    server = await startServer({ args: ['--auth-config', configFile] });
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    if (server) await removeHome(server.home);
    await removeHome(work);
  });

  it('refuses to unregister what a model uses (409 naming it) and what another user registered (403)', async () => {
    const url = server!.url;
    const reg = { model_name: 'admins', model_uri: path.join(work, 'pid.py'), launcher: 'python' };
    expect((await request(url, 'POST', '/v1/model_registrations/flexible', { model: reg, persist: true }, as(ADMIN))).status).toBe(200);
    expect((await request(url, 'POST', '/v1/models', { model_name: 'admins', model_type: 'flexible', model_uid: 'running-one' }, as(ADMIN))).status).toBe(200);

    const byOther = await request(url, 'DELETE', '/v1/model_registrations/flexible/admins', undefined, as(REGISTRAR));
    expect(byOther.status, byOther.text).toBe(403);
    expect(byOther.body.error.code).toBe('registration_not_owner');
    const inUse = await request(url, 'DELETE', '/v1/model_registrations/flexible/admins', undefined, as(ADMIN));
    expect(inUse.status, inUse.text).toBe(409);
    expect(inUse.body.error.code).toBe('registration_in_use');
    expect(inUse.body.error.message).toContain('running-one');
    expect(inUse.body.error.param).toBe('model_name');

    expect((await request(url, 'DELETE', '/v1/models/running-one', undefined, as(ADMIN))).status).toBe(200);
    expect((await request(url, 'DELETE', '/v1/model_registrations/flexible/admins', undefined, as(ADMIN))).status).toBe(200);

    // The registrar's own registration is theirs to remove.
    const own = { model_name: 'mine', model_specs: [{ model_format: 'pytorch', quantization: 'none', model_uri: path.join(work, 'weights') }], dimensions: 8, max_tokens: 16, language: ['en'] };
    const made = await request(url, 'POST', '/v1/model_registrations/embedding', { model: own, persist: true }, as(REGISTRAR));
    expect(made.status, made.text).toBe(200);
    expect((await request(url, 'DELETE', '/v1/model_registrations/embedding/mine', undefined, as(REGISTRAR))).status).toBe(200);
  }, 60_000);

  it('replaces a registration in one step: a refusal keeps the old one, the owner stays, only the owner or an admin may', async () => {
    const url = server!.url;
    const weights = path.join(work, 'weights');
    const def = (extra: Record<string, unknown> = {}) => ({ model_name: 'editable', model_specs: [{ model_format: 'pytorch', quantization: 'none', model_uri: weights }], dimensions: 8, max_tokens: 16, language: ['en'], ...extra });
    expect((await request(url, 'POST', '/v1/model_registrations/embedding', { model: def(), persist: true }, as(REGISTRAR))).status).toBe(200);
    const put = (body: unknown, who: string) => request(url, 'PUT', '/v1/model_registrations/embedding/editable', body, as(who));
    // The new definition is refused (its folder is gone): the old one is still there, whole.
    // Before, the web UI's unregister-then-register lost it here.
    const gone = await put({ model: def({ max_tokens: 32, model_specs: [{ model_format: 'pytorch', quantization: 'none', model_uri: path.join(work, 'moved') }] }), persist: true }, REGISTRAR);
    expect([gone.status, gone.body.error?.param], gone.text).toEqual([400, 'model_specs.0.model_uri']);
    expect((await request(url, 'GET', '/v1/model_registrations/embedding/editable', undefined, as(ADMIN))).body).toMatchObject({ max_tokens: 16 });
    expect((await put({ model: def({ model_name: 'renamed' }) }, REGISTRAR)).body.error?.param).toBe('model_name');
    expect((await put({ model: def({ max_tokens: 64 }) }, ADMIN)).status).toBe(200);
    expect((await request(url, 'GET', '/v1/model_registrations/embedding/editable', undefined, as(ADMIN))).body).toMatchObject({ max_tokens: 64 });
    // The admin's edit did not make the admin its owner: the registrar may still remove it.
    const byAdminThenOwner = await put({ model: def({ max_tokens: 48 }) }, REGISTRAR);
    expect(byAdminThenOwner.status, byAdminThenOwner.text).toBe(200);
    // Another user's registration is not theirs to replace.
    expect((await request(url, 'POST', '/v1/model_registrations/embedding', { model: def({ model_name: 'admins-emb' }), persist: true }, as(ADMIN))).status).toBe(200);
    const other = await request(url, 'PUT', '/v1/model_registrations/embedding/admins-emb', { model: def({ model_name: 'admins-emb', max_tokens: 8 }) }, as(REGISTRAR));
    expect([other.status, other.body.error?.code]).toEqual([403, 'registration_not_owner']);
    expect((await request(url, 'PUT', '/v1/model_registrations/embedding/nowhere', { model: def({ model_name: 'nowhere' }) }, as(ADMIN))).status).toBe(404);
    expect((await request(url, 'PUT', '/v1/model_registrations/embedding/bge-small-en-v1.5', { model: def({ model_name: 'bge-small-en-v1.5' }) }, as(ADMIN))).body.error?.code).toBe('builtin_unregister');
    expect((await request(url, 'DELETE', '/v1/model_registrations/embedding/editable', undefined, as(REGISTRAR))).status).toBe(200);
    expect((await request(url, 'DELETE', '/v1/model_registrations/embedding/admins-emb', undefined, as(ADMIN))).status).toBe(200);
  }, 60_000);

  it("checks a config user's token against the permissions the file grants now", async () => {
    const login = await request(server!.url, 'POST', '/token', { username: 'registrar', password: 'pass4' });
    expect(login.status, login.text).toBe(200);
    const token = login.body.access_token as string;
    const launch = { model_name: 'nothing-here', model_type: 'flexible' };
    // Allowed to try (404: no such model), so not refused for its permission.
    expect((await request(server!.url, 'POST', '/v1/models', launch, as(token))).status).toBe(404);
    await server!.stop();

    await writeFile(configFile, JSON.stringify(config(['models:list'])));
    server = await startServer({ home: server!.home, args: ['--auth-config', configFile] });
    const refused = await request(server.url, 'POST', '/v1/models', launch, as(token));
    expect(refused.status, refused.text).toBe(403);
    expect((await request(server.url, 'GET', '/v1/models', undefined, as(token))).status).toBe(200);
  }, 60_000);
  it('throttles password guessing (429 with Retry-After), writes failures to the audit log, and lets the right password in after the wait', async () => {
    const url = server!.url;
    const login = (password: string) => request(url, 'POST', '/token', { username: 'registrar', password });
    for (let i = 0; i < 4; i++) expect((await login(`guess-${i}`)).status).toBe(401);
    const held = await login('guess-5');
    expect(held.status, held.text).toBe(429);
    expect(held.body.error.code).toBe('login_throttled');
    const wait = Number(held.headers.get('retry-after'));
    expect(wait).toBeGreaterThanOrEqual(1);
    // The right password waits too: a guess that happens to be right is not let through early.
    expect((await login('pass4')).status).toBe(429);
    await new Promise((r) => setTimeout(r, wait * 1000 + 100));
    expect((await login('pass4')).status).toBe(200);
    const audit = await request(url, 'GET', '/v1/admin/audit?action=auth.login.failed', undefined, as(ADMIN));
    expect(audit.status, audit.text).toBe(200);
    const mine = (audit.body as Array<Record<string, any>>).filter((e) => e.target === 'registrar');
    expect(mine).toHaveLength(4);
    expect(mine[0]!.detail.address).toBe('127.0.0.1');
    // Nobody was authenticated: no failure is written as an action of the user tried.
    expect(mine.every((e) => e.actor === '(unauthenticated)')).toBe(true);
    expect((await request(url, 'GET', '/v1/admin/audit?actor=registrar', undefined, as(ADMIN))).body).toEqual([]);
    expect(JSON.stringify(audit.body)).not.toContain('guess-');
    // A key pasted into the username box is not kept; a newline cannot forge a line.
    const pasted = 'sk-SECRETKEYVALUE0123456789';
    expect((await request(url, 'POST', '/token', { username: pasted, password: 'x' })).status).toBe(401);
    expect((await request(url, 'POST', '/token', { username: 'carol\nFAKE admin', password: 'x' })).status).toBe(401);
    // Nor can a right-to-left override make the log show another name.
    expect((await request(url, 'POST', '/token', { username: 'nimda\u202e', password: 'x' })).status).toBe(401);
    const after = JSON.stringify((await request(url, 'GET', '/v1/admin/audit?action=auth.login.failed', undefined, as(ADMIN))).body);
    expect(after).not.toContain('SECRETKEYVALUE');
    expect(after).toContain('sk-SEC... (27 characters');
    expect(after).toContain('carol\\\\u000aFAKE admin');
    expect(after).toContain('nimda\\\\u202e');
    expect(after).not.toContain('\u202e');
  }, 60_000);
});

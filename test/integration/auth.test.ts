import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { SignJWT, UnsecuredJWT } from 'jose';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SECRET, upstreamAuthConfig } from '../fixtures/auth-users.js';
import { writePythonLauncher } from './harness/fixtures.js';
import { tinyModel } from './harness/tiny-models.js';
import { request } from './harness/http.js';
import { makeHome, removeHome, repoRoot, startServer, type TestServer } from './harness/server.js';

const ADMIN_KEY = 'sk-3sjLbdwqAhhAF';
const USER2_KEY = 'sk-72tkvudyGLPMi';
const USER3_KEY = 'sk-m6jEzEwmCc4iQ';

describe('authentication against the real server (contract §7)', () => {
  let server: TestServer;
  let work: string;
  const as = (key?: string): Record<string, string> => (key ? { authorization: `Bearer ${key}` } : {});
  const get = (p: string, key?: string) => request(server.url, 'GET', p, undefined, as(key));
  const post = (p: string, body: unknown, key?: string) => request(server.url, 'POST', p, body, as(key));
  const del = (p: string, key?: string) => request(server.url, 'DELETE', p, undefined, as(key));

  beforeAll(async () => {
    work = await makeHome('hangar-fixtures-');
    const configFile = path.join(work, 'auth.json');
    await writeFile(configFile, JSON.stringify(upstreamAuthConfig()));
    const home = await makeHome();
    server = await startServer({ home, args: ['--auth-config', configFile] });
    const launcher = await writePythonLauncher(work);
    const reg = await post('/v1/model_registrations/flexible', { model: { model_name: 'scaler', model_uri: launcher, launcher: 'python' }, persist: false }, ADMIN_KEY);
    expect(reg.status, reg.text).toBe(200);
    const embedder = tinyModel<{ path: string; dimensions: number; max_tokens: number }>('embedder');
    const embedReg = await post(
      '/v1/model_registrations/embedding',
      { model: { model_name: 'tiny-embed', dimensions: embedder.dimensions, max_tokens: embedder.max_tokens, language: ['en'], model_specs: [{ model_format: 'pytorch', quantization: 'none', model_uri: embedder.path }] }, persist: false },
      ADMIN_KEY,
    );
    expect(embedReg.status, embedReg.text).toBe(200);
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    await removeHome(server.home);
    await removeHome(work);
  });

  it('says auth is on', async () => {
    expect((await get('/v1/cluster/auth')).body).toEqual({ auth: true });
  });

  it('runs the upstream sequence with a flexible model, whose code only admin may launch', async () => {
    const noCredential = await get('/v1/models');
    expect(noCredential.status).toBe(401);
    expect(noCredential.headers.get('www-authenticate')).toBe('Bearer');

    expect((await get('/v1/models', USER2_KEY)).status).toBe(200);
    const user2Launch = await post('/v1/models', { model_name: 'scaler', model_type: 'flexible', model_uid: 'shared' }, USER2_KEY);
    expect(user2Launch.status).toBe(403);
    expect(user2Launch.body.detail).toBe('Not enough permissions');
    expect(user2Launch.headers.get('www-authenticate')).toBe('Bearer scope="models:start"');

    // models:start alone does not launch a model whose launcher runs a user's Python
    // (issue 20: models:code); the embeddings leg below runs the upstream launch as is.
    const user3Launch = await post('/v1/models', { model_name: 'scaler', model_type: 'flexible', model_uid: 'shared' }, USER3_KEY);
    expect(user3Launch.status, user3Launch.text).toBe(403);
    expect(user3Launch.body.error.code).toBe('code_power_required');
    expect(user3Launch.headers.get('www-authenticate')).toBe('Bearer scope="models:code"');
    expect((await post('/v1/models', { model_name: 'scaler', model_type: 'flexible', model_uid: 'shared' }, ADMIN_KEY)).status).toBe(200);
    expect((await get('/v1/models/shared', USER3_KEY)).status).toBe(200);
    expect((await post('/v1/flexible/infers', { model: 'shared', args: [[2]] }, USER2_KEY)).status).toBe(403);
    const infer = await post('/v1/flexible/infers', { model: 'shared', args: [[2]] }, USER3_KEY);
    expect(infer.status).toBe(200);
    expect(infer.body.values).toEqual([2]);
    expect((await del('/v1/models/shared', USER3_KEY)).status).toBe(403);
    expect((await del('/v1/models/shared', ADMIN_KEY)).status).toBe(200);

    const unknownKey = await get('/v1/models', 'sk-wrongapikey12');
    expect(unknownKey.status).toBe(401);
    expect(unknownKey.body.detail).toBe('Could not validate credentials');
  });

  it('runs the embeddings legs of the upstream sequence, over HTTP and through the OpenAI SDK', async () => {
    expect((await post('/v1/models', { model_name: 'tiny-embed', model_type: 'embedding', model_uid: 'embed' }, USER2_KEY)).status).toBe(403);
    const launch = await post('/v1/models', { model_name: 'tiny-embed', model_type: 'embedding', model_uid: 'embed' }, USER3_KEY);
    expect(launch.status, launch.text).toBe(200);
    expect((await post('/v1/embeddings', { model: 'embed', input: 'hello' }, USER2_KEY)).status).toBe(403);
    expect((await post('/v1/embeddings', { model: 'embed', input: 'hello' }, USER3_KEY)).status).toBe(200);

    const sdk = (apiKey: string) => new OpenAI({ baseURL: `${server.url}/v1`, apiKey, maxRetries: 0 });
    await expect(sdk('sk-wrongapikey12').models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    await expect(sdk(USER2_KEY).embeddings.create({ model: 'embed', input: 'hello' })).rejects.toBeInstanceOf(OpenAI.PermissionDeniedError);
    const ok = await sdk(USER3_KEY).embeddings.create({ model: 'embed', input: 'hello' });
    expect(ok.data).toHaveLength(1);
    expect((await del('/v1/models/embed', USER3_KEY)).status).toBe(403);
    expect((await del('/v1/models/embed', ADMIN_KEY)).status).toBe(200);
  });

  it('refuses a launch by hub id to a user who may start models but not register them, before the hub is asked', async () => {
    // envs point any hub request at a closed loopback port: a check after the hub call would answer 503, not 403.
    const body = { model_name: 'hf.co/test-org/tiny', envs: { HF_ENDPOINT: 'http://127.0.0.1:9' } };
    const refused = await post('/v1/models', body, USER3_KEY);
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('permission_denied');
    expect(refused.headers.get('www-authenticate')).toContain('models:register');
    // admin holds models:register: the same launch goes on to the (absent) hub.
    expect((await post('/v1/models', body, ADMIN_KEY)).status).toBe(503);
  });

  it('logs in with JSON or a form, and the token works like the user', async () => {
    const json = await post('/token', { username: 'user2', password: 'pass2' });
    expect(json.status).toBe(200);
    expect(json.body.token_type).toBe('bearer');
    expect(json.headers.get('cache-control')).toBe('no-store');
    const form = await request(server.url, 'POST', '/token', 'username=user3&password=pass3', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(form.status, form.text).toBe(200);
    expect((await get('/v1/models', json.body.access_token)).status).toBe(200);
    expect((await post('/v1/models', { model_name: 'scaler', model_type: 'flexible' }, json.body.access_token)).status).toBe(403);

    const wrong = await post('/token', { username: 'user2', password: 'nope' });
    expect(wrong.status).toBe(401);
    expect(wrong.body.detail).toBe('Incorrect username or password');
    expect((await post('/token', { username: 'ghost', password: 'pass2' })).status).toBe(401);
    expect((await post('/token', { username: 'user2' })).status).toBe(400);
  });

  it('refuses forged and malformed credentials with 401, never 500', async () => {
    const key = new TextEncoder().encode(SECRET);
    const good = (await post('/token', { username: 'user1', password: 'pass1' })).body.access_token as string;
    const otherSecret = await new SignJWT({ scopes: ['admin'] }).setProtectedHeader({ alg: 'HS256' }).setSubject('user1').sign(new TextEncoder().encode('x'.repeat(64)));
    const algNone = new UnsecuredJWT({ scopes: ['admin'] }).setSubject('user1').encode();
    const deletedUser = await new SignJWT({ scopes: ['admin'] }).setProtectedHeader({ alg: 'HS256' }).setSubject('user9').sign(key);
    const headers: Record<string, string> = {
      'another secret': `Bearer ${otherSecret}`,
      'alg none': `Bearer ${algNone}`,
      truncated: `Bearer ${good.slice(0, good.length - 7)}`,
      'deleted user': `Bearer ${deletedUser}`,
      'key one character off': `Bearer ${ADMIN_KEY.slice(0, -1)}G`,
      'basic auth': `Basic ${Buffer.from('user1:pass1').toString('base64')}`,
      'empty bearer': 'Bearer ',
      'bearer alone': 'Bearer',
      garbage: 'Bearer \u00ff\u00fe',
    };
    for (const [name, authorization] of Object.entries(headers)) {
      const res = await request(server.url, 'GET', '/v1/models', undefined, { authorization });
      expect(res.status, name).toBe(401);
      expect(res.body.error.type, name).toBe('authentication_error');
    }
    expect((await get('/v1/models', good)).status).toBe(200);
  });

  it('guards admin routes and /metrics', async () => {
    expect((await get('/metrics', USER3_KEY)).status).toBe(403);
    const metrics = await get('/metrics', ADMIN_KEY);
    expect(metrics.status).toBe(200);
    expect(metrics.text).toContain('hangar_http_requests_total');
    expect((await get('/v1/cluster/info', USER2_KEY)).status).toBe(403);
    expect((await get('/v1/cluster/info', ADMIN_KEY)).status).toBe(200);
    expect((await get('/status')).status).toBe(200);
  });

  it('never writes a key, a token or a password to the log', async () => {
    const token = (await post('/token', { username: 'user3', password: 'pass3' })).body.access_token as string;
    await get('/v1/models', token);
    await get('/v1/models', USER2_KEY);
    await new Promise((r) => setTimeout(r, 200));
    const log = server.logs.map((l) => JSON.stringify(l)).join('\n');
    expect(log.length).toBeGreaterThan(0);
    for (const secret of [USER2_KEY, USER3_KEY, ADMIN_KEY, 'pass3', 'pass1', token, SECRET]) expect(log).not.toContain(secret);
  });
});

describe('start-up with a bad auth config', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await makeHome('hangar-auth-bad-');
  });
  afterAll(async () => removeHome(dir));

  it.each<[string, string | null, RegExp]>([
    ['a missing file', null, /does not exist/],
    ['a file that is not JSON', '{"auth_config":', /not valid JSON/],
    ['a bad algorithm', JSON.stringify({ ...upstreamAuthConfig(), auth_config: { algorithm: 'none', secret_key: SECRET } }), /auth_config\.algorithm/],
    ['a malformed key', JSON.stringify({ ...upstreamAuthConfig(), user_config: [{ username: 'u', password: 'p', permissions: [], api_keys: ['sk-1'] }] }), /user_config\.0\.api_keys\.0/],
  ])('refuses %s, exits non-zero and starts nothing', async (_name, content, message) => {
    const file = path.join(dir, `${Math.random().toString(36).slice(2)}.json`);
    if (content !== null) await writeFile(file, content);
    const home = path.join(dir, `home-${Math.random().toString(36).slice(2)}`);
    const result = spawnSync(process.execPath, [path.join(repoRoot, 'bin', 'hangar.js'), 'start', '--port', '0', '--home', home, '--auth-config', file], { encoding: 'utf8', timeout: 30_000 });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(message);
    expect(result.stdout).not.toContain('hangar is listening');
    expect(existsSync(home), 'the home folder must not be created').toBe(false);
  });
});

import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SECRET } from '../fixtures/auth-users.js';
import { tinySklearn, writePythonLauncher } from './harness/fixtures.js';
import { request } from './harness/http.js';
import { makeHome, removeHome, startServer, type TestServer } from './harness/server.js';
import { tinyEmbedder, tinyEmbedderRegistration } from './harness/tiny-models.js';

const ADMIN = 'sk-adminadmin001';
const DEV = 'sk-developer0001'; // models:register + models:start (+ list, read): "can add and launch models"
const CODER = 'sk-codercoder001'; // the same, plus models:code
const base = ['models:list', 'models:read', 'models:register', 'models:start', 'models:stop'];

/** Who may make the service run code of their choosing (issue 20): models:code, with auth on. */
describe('models:code: the power to run code on the host (real server, auth on)', () => {
  let server: TestServer;
  let work: string;
  let launcher: string;
  let sklearnFile: string;
  const call = (method: string, p: string, body: unknown, key: string) => request(server.url, method, p, body, { authorization: `Bearer ${key}` });
  const flexible = (name: string, uri: string, kind: string, args?: Record<string, unknown>) => ({ model: { model_name: name, model_uri: uri, launcher: kind, ...(args ? { launcher_args: args } : {}) }, persist: true });

  beforeAll(async () => {
    work = await makeHome('hangar-lp-');
    launcher = await writePythonLauncher(work);
    sklearnFile = tinySklearn().modelPath;
    const authFile = path.join(work, 'auth.json');
    await writeFile(authFile, JSON.stringify({
      auth_config: { algorithm: 'HS256', secret_key: SECRET },
      user_config: [
        { username: 'admin', password: 'pw', permissions: ['admin'], api_keys: [ADMIN] },
        { username: 'dev', password: 'pw', permissions: base, api_keys: [DEV] },
        { username: 'coder', password: 'pw', permissions: [...base, 'models:code'], api_keys: [CODER] },
      ],
    }), { mode: 0o600 });
    server = await startServer({ args: ['--auth-config', authFile] });
    const reg = await call('POST', '/v1/model_registrations/embedding', tinyEmbedderRegistration('tiny-embed', tinyEmbedder()), DEV);
    expect(reg.status, reg.text).toBe(200);
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    if (server) await removeHome(server.home);
    await removeHome(work);
  });

  const refusals: Array<[what: string, method: string, path: string, body: () => unknown, names: string]> = [
    ['register the python launcher', 'POST', '/v1/model_registrations/flexible', () => flexible('py-model', launcher, 'python'), 'python launcher'],
    ['register an sklearn pickle', 'POST', '/v1/model_registrations/flexible', () => flexible('pickle-model', sklearnFile, 'sklearn'), 'unpickles'],
    ['launch with trust_remote_code', 'POST', '/v1/models', () => ({ model_name: 'tiny-embed', model_type: 'embedding', model_uid: 'trc', trust_remote_code: true }), 'trust_remote_code'],
    // Python reads "yes" as true (it passes the value on with bool()): so does the check.
    ['register launcher_args with trust_remote_code "yes"', 'POST', '/v1/model_registrations/flexible', () => flexible('trc-flex', tinyEmbedder().path, 'transformers', { trust_remote_code: 'yes' }), 'trust_remote_code'],
    ['launch with LD_PRELOAD', 'POST', '/v1/models', () => ({ model_name: 'tiny-embed', model_type: 'embedding', model_uid: 'ldp', envs: { LD_PRELOAD: '/tmp/nothing-here.so' } }), 'LD_PRELOAD'],
    ['launch with PYTHONPATH', 'POST', '/v1/models', () => ({ model_name: 'tiny-embed', model_type: 'embedding', model_uid: 'pyp', envs: { PYTHONPATH: '/tmp' } }), 'PYTHONPATH'],
    // A hub of the caller's choosing picks each file's bytes and, by the ETag its blob is named with, where it is written.
    ['launch with its own HF_ENDPOINT', 'POST', '/v1/models', () => ({ model_name: 'tiny-embed', model_type: 'embedding', model_uid: 'hfe', envs: { HF_ENDPOINT: 'http://127.0.0.1:9' } }), 'HF_ENDPOINT'],
    ['launch with its own HF_HUB_CACHE', 'POST', '/v1/models', () => ({ model_name: 'tiny-embed', model_type: 'embedding', model_uid: 'hfc', envs: { HF_HUB_CACHE: path.join(work, 'hub-cache') } }), 'HF_HUB_CACHE'],
  ];

  it.each(refusals)('refuses models:register + models:start to %s (403 naming it), and keeps nothing', async (_what, method, p, body, names) => {
    const res = await call(method, p, body(), DEV);
    expect(res.status, res.text).toBe(403);
    expect(res.body.error.code).toBe('code_power_required');
    expect(res.body.error.message).toContain(names);
    expect(res.headers.get('www-authenticate')).toBe('Bearer scope="models:code"');
    expect((await call('GET', '/v1/models', undefined, ADMIN)).body.data).toEqual([]);
    expect((await call('GET', '/v1/model_registrations/flexible', undefined, ADMIN)).body).toEqual([]);
  });

  it('refuses a trust_remote_code that is not a boolean with 400, to everybody: the runtime would read "false" as true', async () => {
    for (const key of [DEV, CODER]) {
      for (const value of ['yes', 'false', 1]) {
        const res = await call('POST', '/v1/models', { model_name: 'tiny-embed', model_type: 'embedding', model_uid: 'trc-typed', trust_remote_code: value }, key);
        expect([res.status, res.body.error?.param], res.text).toEqual([400, 'trust_remote_code']);
      }
    }
    expect((await call('GET', '/v1/models/instances', undefined, ADMIN)).body).toEqual([]);
  });

  it("refuses a launch by hub id with its own HF_ENDPOINT before the hub is asked, not after its answers are registered", async () => {
    // A closed port: a check after the hub call would answer 503, not 403.
    const res = await call('POST', '/v1/models', { model_name: 'hf.co/test-org/tiny', envs: { HF_ENDPOINT: 'http://127.0.0.1:9' } }, DEV);
    expect([res.status, res.body.error?.code], res.text).toEqual([403, 'code_power_required']);
    expect(res.body.error.message).toContain('HF_ENDPOINT');
    expect((await call('GET', '/v1/model_registrations/LLM', undefined, ADMIN)).body.map((r: { model_name: string }) => r.model_name)).not.toContain('test-org--tiny');
  });

  it('lets the hub, CUDA and engine envs through without the power', async () => {
    const res = await call('POST', '/v1/models', { model_name: 'tiny-embed', model_type: 'embedding', model_uid: 'tok', envs: { HF_TOKEN: 'hf_x', HF_HUB_OFFLINE: '1', CUDA_VISIBLE_DEVICES: '', OMP_NUM_THREADS: '1' } }, DEV);
    expect(res.status, res.text).toBe(200);
    expect((await call('DELETE', '/v1/models/tok', undefined, ADMIN)).status).toBe(200);
  }, 60_000);

  it('allows the same to a user with models:code, and writes each to the audit log', async () => {
    for (const [what, method, p, body] of refusals) {
      const res = await call(method, p, body(), CODER);
      expect(res.status, `${what}: ${res.text}`).toBe(200);
    }
    const audit = (await call('GET', '/v1/admin/audit?limit=100', undefined, ADMIN)).body as Array<{ actor: string; action: string; detail: { risks: string[] } }>;
    const code = audit.filter((e) => e.action.endsWith('.code'));
    expect(code.map((e) => e.action).sort()).toEqual([...Array(5).fill('model.launch.code'), 'model.register.code', 'model.register.code', 'model.register.code']);
    expect(code.every((e) => e.actor === 'coder' && e.detail.risks.length > 0)).toBe(true);
    // Launching what a coder registered still needs the power: the launch runs the file.
    expect((await call('POST', '/v1/models', { model_name: 'py-model', model_type: 'flexible', model_uid: 'py' }, DEV)).status).toBe(403);
    expect((await call('POST', '/v1/models', { model_name: 'py-model', model_type: 'flexible', model_uid: 'py' }, CODER)).status).toBe(200);
    expect((await call('POST', '/v1/models/py/replicas', {}, DEV)).status).toBe(403);
  }, 120_000);
});

describe('models:code with authentication off', () => {
  let server: TestServer;
  let work: string;

  beforeAll(async () => {
    work = await makeHome('hangar-lp-off-');
    server = await startServer();
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    if (server) await removeHome(server.home);
    await removeHome(work);
  });

  it('allows everything, as before', async () => {
    const launcher = await writePythonLauncher(work);
    const reg = await request(server.url, 'POST', '/v1/model_registrations/flexible', { model: { model_name: 'py', model_uri: launcher, launcher: 'python' }, persist: false });
    expect(reg.status, reg.text).toBe(200);
    const launch = await request(server.url, 'POST', '/v1/models', { model_name: 'py', model_type: 'flexible', envs: { LD_PRELOAD: '', PYTHONPATH: '/tmp' } });
    expect(launch.status, launch.text).toBe(200);
    const pickle = await request(server.url, 'POST', '/v1/model_registrations/flexible', { model: { model_name: 'clf', model_uri: tinySklearn().modelPath, launcher: 'sklearn' }, persist: false });
    expect(pickle.status, pickle.text).toBe(200);
    const embedReg = await request(server.url, 'POST', '/v1/model_registrations/embedding', tinyEmbedderRegistration('e', tinyEmbedder()));
    expect(embedReg.status).toBe(200);
    const trusted = await request(server.url, 'POST', '/v1/models', { model_name: 'e', model_type: 'embedding', trust_remote_code: true });
    expect(trusted.status, trusted.text).toBe(200);
  }, 120_000);
});

import { lstatSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { chmod, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upstreamAuthConfig } from '../fixtures/auth-users.js';
import { client, request } from './harness/http.js';
import { makeHome, removeHome, startServer, type TestServer } from './harness/server.js';
import { tinyEmbedder, tinyEmbedderRegistration } from './harness/tiny-models.js';

const SECRET_VALUE = 'hf_DoNotShowMe_8c1f0a';
const OTHER_SECRET = 'pw-DoNotShowMe-77';

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    return lstatSync(p).isDirectory() ? [p, ...walk(p)] : [p];
  });
}

/** Secrets at rest (issue 20): modes under the home whatever the umask, and launch envs that look secret shown nowhere. */
describe('secrets at rest (real server, umask 022)', () => {
  let server: TestServer;
  let work: string;
  let previousUmask: number;

  beforeAll(async () => {
    previousUmask = process.umask(0o022); // the server inherits it
    work = await makeHome('hangar-secrets-');
    const embedder = tinyEmbedder();
    server = await startServer();
    const api = client(server.url);
    const reg = await api.post('/v1/model_registrations/embedding', tinyEmbedderRegistration('tiny-embed', embedder, true));
    expect(reg.status, reg.text).toBe(200);
    const launch = await api.post('/v1/models', { model_name: 'tiny-embed', model_type: 'embedding', model_uid: 'emb', envs: { HF_TOKEN: SECRET_VALUE, DB_PASSWORD: OTHER_SECRET } });
    expect(launch.status, launch.text).toBe(200);
    expect((await api.post('/v1/autostart/models', { model_name: 'tiny-embed', model_type: 'embedding', model_uid: 'auto', envs: { HF_TOKEN: SECRET_VALUE } })).status).toBe(200);
    expect((await api.post('/v1/embeddings', { model: 'emb', input: 'x' })).status).toBe(200);
  }, 120_000);

  afterAll(async () => {
    process.umask(previousUmask);
    await server?.stop();
    if (server) await removeHome(server.home);
    await removeHome(work);
  });

  it('creates every file 0600 and every folder 0700 under the home', () => {
    const entries = walk(server.home);
    expect(entries.some((p) => p.endsWith('instances.json'))).toBe(true);
    expect(entries.some((p) => p.endsWith('hangar.db'))).toBe(true);
    for (const p of [server.home, ...entries]) {
      const info = lstatSync(p);
      if (info.isSymbolicLink()) continue;
      expect(info.mode & 0o077, `${p} is 0${(info.mode & 0o777).toString(8)}`).toBe(0);
    }
  });

  it('keeps secret-looking launch envs for the restore, and shows them in no answer, event, log or metric', async () => {
    expect(readFileSync(path.join(server.home, 'state', 'instances.json'), 'utf8')).toContain(SECRET_VALUE);
    const api = client(server.url);
    const answers = await Promise.all(
      ['/v1/models', '/v1/models/emb', '/v1/models/instances', '/v1/models/emb/replicas', '/v1/models/emb/events', '/v1/autostart/models', '/metrics', '/v1/cluster/info', '/status'].map(async (p) => [p, (await api.get(p)).text] as const),
    );
    for (const [p, text] of answers) {
      expect(text, p).not.toContain(SECRET_VALUE);
      expect(text, p).not.toContain(OTHER_SECRET);
    }
    const logs = JSON.stringify(server.logs) + server.stderr();
    expect(logs).not.toContain(SECRET_VALUE);
    expect(logs).not.toContain(OTHER_SECRET);
  });
});

describe('a world-readable auth config file', () => {
  it('gets a warning at start naming the file and the fix', async () => {
    const work = await makeHome('hangar-authmode-');
    const file = path.join(work, 'auth.json');
    await writeFile(file, JSON.stringify(upstreamAuthConfig()));
    await chmod(file, 0o644);
    const server = await startServer({ args: ['--auth-config', file] });
    try {
      const warning = server.logs.find((l) => typeof l.msg === 'string' && (l.msg as string).includes('can be read by other users'));
      expect(warning?.msg).toContain(`chmod 600 ${file}`);
      expect((await request(server.url, 'GET', '/v1/cluster/auth')).body).toEqual({ auth: true });
      expect(statSync(file).mode & 0o777).toBe(0o644); // warned about, not changed
    } finally {
      await server.stop();
      await removeHome(server.home);
      await removeHome(work);
    }
  }, 60_000);
});

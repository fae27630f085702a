import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { upstreamAuthConfig } from '../fixtures/auth-users.js';
import { writePythonLauncher } from '../integration/harness/fixtures.js';
import { request } from '../integration/harness/http.js';
import { makeReadable, sharedDir, startHangar, type HangarContainer } from './harness.js';

const image = inject('hangarImage');
const ADMIN_KEY = 'sk-3sjLbdwqAhhAF';
const LIST_ONLY_KEY = 'sk-72tkvudyGLPMi';
const START_AND_READ_KEY = 'sk-m6jEzEwmCc4iQ';

// The README's way of turning on auth in the container: a users file mounted
// read-only and HANGAR_AUTH_CONFIG naming it.
describe.skipIf(!image)('the CPU image: authentication from a mounted config', () => {
  let hangar: HangarContainer;
  let config: string;
  const as = (key?: string): Record<string, string> => (key ? { authorization: `Bearer ${key}` } : {});

  beforeAll(async () => {
    config = await sharedDir('hangar-image-auth-');
    await writeFile(path.join(config, 'auth.json'), JSON.stringify(upstreamAuthConfig()));
    await writePythonLauncher(config);
    await makeReadable(config);
    hangar = await startHangar(image, {
      mounts: [
        { source: config, target: '/etc/hangar', mode: 'ro' },
        { source: config, target: '/models', mode: 'ro' },
      ],
      env: { HANGAR_AUTH_CONFIG: '/etc/hangar/auth.json' },
    });
  });

  afterAll(async () => {
    if (hangar) await hangar.stop().catch(() => undefined);
    await rm(config, { recursive: true, force: true });
  });

  it('answers 401 without or with a wrong credential, 403 without the permission', async () => {
    expect((await request(hangar.url, 'GET', '/v1/cluster/auth')).body).toEqual({ auth: true });

    const none = await request(hangar.url, 'GET', '/v1/models');
    expect(none.status).toBe(401);
    expect(none.body.detail).toBe('Not authenticated');
    const wrong = await request(hangar.url, 'GET', '/v1/models', undefined, as('sk-wrongapikey12'));
    expect(wrong.status).toBe(401);
    expect(wrong.body.detail).toBe('Could not validate credentials');

    expect((await request(hangar.url, 'GET', '/v1/models', undefined, as(LIST_ONLY_KEY))).status).toBe(200);
    const registration = { model: { model_name: 'guarded', model_uri: '/models/scaler_launcher.py', launcher: 'python' }, persist: false };
    const refused = await request(hangar.url, 'POST', '/v1/model_registrations/flexible', registration, as(LIST_ONLY_KEY));
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toBe('Not enough permissions');
  });

  it('logs in for a token that works; each key does what its permissions allow', async () => {
    const login = await request(hangar.url, 'POST', '/token', { username: 'user1', password: 'pass1' });
    expect(login.status, login.text).toBe(200);
    const withToken = await request(hangar.url, 'GET', '/v1/models', undefined, as(login.body.access_token));
    expect(withToken.status).toBe(200);

    const registration = { model: { model_name: 'guarded', model_uri: '/models/scaler_launcher.py', launcher: 'python', launcher_args: { scale: 3 } }, persist: false };
    const registered = await request(hangar.url, 'POST', '/v1/model_registrations/flexible', registration, as(ADMIN_KEY));
    expect(registered.status, registered.text).toBe(200);
    const launch = { model_name: 'guarded', model_type: 'flexible', model_uid: 'guarded' };
    expect((await request(hangar.url, 'POST', '/v1/models', launch, as(LIST_ONLY_KEY))).status).toBe(403);
    // Its launcher runs a registered Python file: models:start alone does not launch it (models:code).
    const refused = await request(hangar.url, 'POST', '/v1/models', launch, as(START_AND_READ_KEY));
    expect(refused.status, refused.text).toBe(403);
    expect(refused.body.error.code).toBe('code_power_required');
    const launched = await request(hangar.url, 'POST', '/v1/models', launch, as(ADMIN_KEY));
    expect(launched.status, launched.text).toBe(200);
    const body = { model: 'guarded', args: [[2]] };
    expect((await request(hangar.url, 'POST', '/v1/flexible/infers', body, as(LIST_ONLY_KEY))).status).toBe(403);
    const inferred = await request(hangar.url, 'POST', '/v1/flexible/infers', body, as(START_AND_READ_KEY));
    expect(inferred.status, inferred.text).toBe(200);
    expect(inferred.body.values).toEqual([6]);
    expect((await request(hangar.url, 'DELETE', '/v1/models/guarded', undefined, as(START_AND_READ_KEY))).status).toBe(403);
    expect((await request(hangar.url, 'DELETE', '/v1/models/guarded', undefined, as(ADMIN_KEY))).status).toBe(200);
  });
});

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upstreamAuthConfig } from '../fixtures/auth-users.js';
import { request } from './harness/http.js';
import { waitFor } from './harness/processes.js';
import { makeHome, removeHome, startServer, type TestServer } from './harness/server.js';
import { jsonEvents, readSse } from './harness/sse-client.js';
import { tinyEmbedder, tinyEmbedderRegistration } from './harness/tiny-models.js';

const ADMIN_KEY = 'sk-3sjLbdwqAhhAF'; // user1 of the auth config file: admin

/** Every file under a folder, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? filesUnder(p) : e.isFile() ? [p] : [];
  });
}

describe('database API keys, users, limits, usage and audit (real server)', () => {
  let server: TestServer;
  let work: string;
  let configFile: string;
  const as = (credential?: string): Record<string, string> => (credential ? { authorization: `Bearer ${credential}` } : {});
  const get = (p: string, credential = ADMIN_KEY) => request(server.url, 'GET', p, undefined, as(credential));
  const post = (p: string, body: unknown, credential = ADMIN_KEY) => request(server.url, 'POST', p, body, as(credential));
  const put = (p: string, body: unknown, credential = ADMIN_KEY) => request(server.url, 'PUT', p, body, as(credential));
  const del = (p: string, credential = ADMIN_KEY) => request(server.url, 'DELETE', p, undefined, as(credential));
  const chat = (credential: string, extra: Record<string, unknown> = {}) =>
    post('/v1/chat/completions', { model: 'sim', messages: [{ role: 'user', content: 'two words' }], max_tokens: 5, ...extra }, credential);
  const embed = (credential: string) => post('/v1/embeddings', { model: 'embed', input: 'hello there' }, credential);
  const newKey = async (body: Record<string, unknown>, credential = ADMIN_KEY): Promise<{ id: number; key: string; prefix: string; name: string }> => {
    const res = await post('/v1/admin/keys', body, credential);
    expect(res.status, res.text).toBe(201);
    // The one answer with the key in clear is kept by no cache.
    expect(res.headers.get('cache-control')).toBe('no-store');
    return res.body;
  };
  const clearKeys: string[] = [];

  beforeAll(async () => {
    work = await makeHome('hangar-keys-work-');
    configFile = path.join(work, 'auth.json');
    await writeFile(configFile, JSON.stringify(upstreamAuthConfig()));
    server = await startServer({ args: ['--auth-config', configFile] });
    const reg = await post('/v1/model_registrations/embedding', tinyEmbedderRegistration('tiny-embed', tinyEmbedder(), true));
    expect(reg.status, reg.text).toBe(200);
    const launches = await Promise.all([
      post('/v1/models', { model_name: 'simulator', model_type: 'LLM', model_engine: 'simulator', model_uid: 'sim', replica: 2, step_ms: 5, ttft_ms: 0 }),
      post('/v1/models', { model_name: 'tiny-embed', model_type: 'embedding', model_uid: 'embed' }),
    ]);
    for (const l of launches) expect(l.status, l.text).toBe(200);
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
    await removeHome(server.home);
    await removeHome(work);
  });

  it('a new key works at once on chat and embeddings; revoking it makes it 401 at once', async () => {
    const created = await newKey({ name: 'ci', description: 'for the CI job' });
    clearKeys.push(created.key);
    expect(created.key).toMatch(/^sk-[A-Za-z0-9]{48}$/);
    expect(created.prefix).toBe(created.key.slice(0, 12));
    expect((await chat(created.key)).status).toBe(200);
    expect((await embed(created.key)).status).toBe(200);

    const listed = await get('/v1/admin/keys');
    const row = listed.body.find((k: { id: number }) => k.id === created.id);
    expect(row).toMatchObject({ owner_username: 'user1', user_id: null, key_prefix: created.prefix, name: 'ci', enabled: true, limits: { rpm: null, tpm: null, max_parallel: null } });
    expect(row.last_used_at).not.toBeNull();
    expect(JSON.stringify(listed.body)).not.toContain(created.key);

    expect((await del(`/v1/admin/keys/${created.id}`)).body).toEqual({ ok: true });
    const after = await chat(created.key);
    expect(after.status).toBe(401);
    expect(after.body.error.code).toBe('invalid_credentials');
    expect((await get(`/v1/admin/keys/${created.id}`)).status).toBe(404);
  });

  it('an expired or disabled key is 401; a past expires_at is refused on creation', async () => {
    const created = await newKey({ name: 'short-lived', expires_at: new Date(Date.now() + 3_600_000).toISOString() });
    clearKeys.push(created.key);
    expect((await chat(created.key)).status).toBe(200);
    expect((await put(`/v1/admin/keys/${created.id}`, { expires_at: new Date(Date.now() - 1000).toISOString() })).status).toBe(200);
    expect((await chat(created.key)).status).toBe(401);
    expect((await put(`/v1/admin/keys/${created.id}`, { expires_at: null, enabled: false })).status).toBe(200);
    expect((await chat(created.key)).status).toBe(401);
    expect((await put(`/v1/admin/keys/${created.id}`, { enabled: true })).status).toBe(200);
    expect((await chat(created.key)).status).toBe(200);

    const past = await post('/v1/admin/keys', { name: 'x', expires_at: '2020-01-01T00:00:00Z' });
    expect(past.status).toBe(400);
    expect(past.body.error.param).toBe('expires_at');
  });

  it('refuses a field the admin routes do not take, naming it, and keeps nothing', async () => {
    const before = ((await get('/v1/admin/keys')).body as unknown[]).length;
    const cases: Array<[string, 'POST' | 'PUT', unknown, string]> = [
      ['/v1/admin/keys', 'POST', { name: 'typo', rpm: 5 }, 'rpm'],
      ['/v1/admin/keys', 'POST', { name: 'typo', limits: { rpm: 5, tokens_per_minute: 9 } }, 'limits.tokens_per_minute'],
      ['/v1/admin/keys', 'POST', { name: 'typo', models: ['embed'] }, 'models'],
      ['/v1/admin/keys/1', 'PUT', { max_parallel: 1 }, 'max_parallel'],
      ['/v1/admin/users', 'POST', { username: 'typo', password: 'long enough', permission: ['admin'] }, 'permission'],
      ['/v1/admin/users/1/password', 'PUT', { new_password: 'long enough', old_password: 'was' }, 'old_password'],
      // A right-to-left override showed this one as "admin-key" in the web UI's table.
      ['/v1/admin/keys', 'POST', { name: '\u202eyek-nimda' }, 'name'],
      ['/v1/admin/keys/1', 'PUT', { name: 'a\u200bb' }, 'name'],
      // Usage by user calls requests without a database key this: a user of the name was merged with them.
      ['/v1/admin/users', 'POST', { username: 'Anonymous', password: 'long enough' }, 'username'],
    ];
    for (const [route, method, body, param] of cases) {
      const res = method === 'POST' ? await post(route, body) : await put(route, body);
      expect(res.status, `${method} ${route} ${JSON.stringify(body)}: ${res.text}`).toBe(400);
      expect(res.body.error, route).toMatchObject({ code: 'invalid_field', param });
      expect(res.body.error.message, route).toContain(param.split('.').at(-1));
    }
    expect((await get('/v1/admin/keys')).body).toHaveLength(before);
    expect(((await get('/v1/admin/users')).body as Array<{ username: string }>).map((u) => u.username)).not.toContain('typo');
  });

  it('a key limited to one model gets 403 on another', async () => {
    const created = await newKey({ name: 'sim-only', model_permissions: ['sim'] });
    clearKeys.push(created.key);
    expect((await chat(created.key)).status).toBe(200);
    const other = await embed(created.key);
    expect(other.status).toBe(403);
    expect(other.body.error).toMatchObject({ code: 'key_model_denied', param: 'model' });
    // The name the model was launched from counts as well as its uid.
    const byName = await newKey({ name: 'by-name', model_permissions: ['tiny-embed'] });
    expect((await embed(byName.key)).status).toBe(200);
    expect((await chat(byName.key)).status).toBe(403);
    // vLLM's tokenizer routes may leave the model out while one LLM runs (here `sim`): the
    // key's limits apply to the model chosen for it.
    const tokenize = (key: string) => post('/tokenize', { prompt: 'x' }, key);
    expect((await tokenize(byName.key)).body.error).toMatchObject({ code: 'key_model_denied', param: 'model' });
    // `sim` is admitted; its engine has no tokenizer, and says so.
    expect((await tokenize(created.key)).body.error).toMatchObject({ code: 'inference_invalid_input', message: expect.stringContaining('tokenize') });
    // A model's events and progress are the model's too (they show its requests' errors).
    for (const route of ['events', 'progress']) {
      expect((await get(`/v1/models/embed/${route}`, created.key)).body.error, route).toMatchObject({ code: 'key_model_denied' });
      expect((await get(`/v1/models/sim/${route}`, created.key)).status, route).toBe(200);
    }
    // Listing shows a limited key only its models, as LiteLLM's virtual keys (before, a
    // client offered every model and its call of another was a 403); describing another is refused.
    const ids = async (key: string) => ((await get('/v1/models', key)).body.data as { id: string }[]).map((m) => m.id).sort();
    expect(await ids(created.key)).toEqual(['sim']);
    expect(await ids(byName.key)).toEqual(['embed']);
    expect(await ids(ADMIN_KEY)).toEqual(expect.arrayContaining(['embed', 'sim']));
    const anthropicIds = ((await get('/anthropic/v1/models', created.key)).body.data as { id: string }[]).map((m) => m.id);
    expect(anthropicIds).toEqual(['sim']);
    expect(((await get('/v1/models/instances', byName.key)).body as { model_uid: string }[]).map((i) => i.model_uid)).toEqual(['embed']);
    for (const route of ['/v1/models/embed', '/v1/models/embed/replicas', '/anthropic/v1/models/embed']) {
      expect((await get(route, created.key)).body.error, route).toMatchObject({ code: 'key_model_denied' });
    }
    expect((await get('/v1/models/sim', created.key)).status).toBe(200);
    const holders = async (key: string) => ((await get('/v1/memory', key)).body.devices as { models: { model_uid: string }[] }[]).flatMap((d) => d.models.map((m) => m.model_uid)).sort();
    expect(await holders(created.key)).toEqual(['sim']);
    expect(await holders(ADMIN_KEY)).toEqual(expect.arrayContaining(['embed', 'sim']));
    // A stored response is its model's too: the owner's key for another model finds nothing
    // (before, it read the text its owner had sent to `sim`).
    const stored = await post('/v1/responses', { model: 'sim', input: 'two words', max_output_tokens: 4 }, created.key);
    expect(stored.status, stored.text).toBe(200);
    const id = stored.body.id as string;
    expect((await get(`/v1/responses/${id}`, created.key)).status).toBe(200);
    for (const res of [await get(`/v1/responses/${id}`, byName.key), await get(`/v1/responses/${id}/input_items`, byName.key), await del(`/v1/responses/${id}`, byName.key)]) {
      expect([res.status, res.body.error?.code]).toEqual([404, 'response_not_found']);
    }
    expect((await get(`/v1/responses/${id}`, created.key)).status).toBe(200);
    // A key limited by model name keeps its responses after the uid that answered is gone
    // (before, the name was looked up from the running model, and they became 404s).
    const simName = await newKey({ name: 'simulator-only', model_permissions: ['simulator'] });
    clearKeys.push(simName.key);
    expect((await post('/v1/models', { model_name: 'simulator', model_type: 'LLM', model_engine: 'simulator', model_uid: 'sim-gone', step_ms: 1, ttft_ms: 0 })).status).toBe(200);
    const kept = await post('/v1/responses', { model: 'sim-gone', input: 'two words', max_output_tokens: 4 }, simName.key);
    expect(kept.status, kept.text).toBe(200);
    expect((await del('/v1/models/sim-gone')).status).toBe(200);
    expect((await get(`/v1/responses/${kept.body.id}`, simName.key)).status).toBe(200);
    expect((await get(`/v1/responses/${kept.body.id}`, byName.key)).status).toBe(404);
  });

  it("a user reaches only their own requests by id: another user's abort and progress find nothing", async () => {
    const USER3 = 'sk-m6jEzEwmCc4iQ'; // models:read, not admin
    const messages = [{ role: 'user', content: 'hi' }];
    // The admin and user3 each stream with the same client-chosen id.
    const adminStream = readSse(server.url, '/v1/chat/completions', { model: 'sim', messages, max_tokens: 600, stream: true, request_id: 'job-42' }, { headers: as(ADMIN_KEY) });
    const userStream = readSse(server.url, '/v1/chat/completions', { model: 'sim', messages, max_tokens: 400, stream: true, request_id: 'job-42' }, { headers: as(USER3) });
    const moving = async (credential: string) => ((await get('/v1/requests/job-42/progress', credential)).body?.progress ?? 0) > 0;
    await waitFor(async () => (await moving(ADMIN_KEY)) && (await moving(USER3)), 10_000);
    // A key of user3's limited to another model may not abort calls of this one.
    const embedOnly = await newKey({ name: 'embed-only', owner: 'user3', model_permissions: ['embed'] });
    clearKeys.push(embedOnly.key);
    expect((await post('/v1/models/sim/requests/job-42/abort', {}, embedOnly.key)).body.error).toMatchObject({ code: 'key_model_denied' });
    // user3's abort stops user3's stream only, and names the id it was given.
    expect((await post('/v1/models/sim/requests/job-42/abort', {}, USER3)).body).toEqual({ msg: 'DONE' });
    const stopped = jsonEvents(await userStream);
    expect(stopped.at(-1)?.error).toMatchObject({ code: 'request_aborted', message: expect.stringContaining('job-42') });
    expect(await moving(ADMIN_KEY)).toBe(true);
    expect((await get('/v1/requests/job-42/progress', USER3)).body).toEqual({ progress: 1 });
    // Nor can user3 reach the admin's request by its own id (x-request-id).
    const admin = await adminStream;
    expect(admin.data.at(-1)).toBe('[DONE]');
    const adminId = admin.headers['x-request-id'] as string;
    expect((await post(`/v1/models/sim/requests/${adminId}/abort`, {}, USER3)).body).toEqual({ msg: 'NOT_FOUND' });
    expect((await get(`/v1/requests/${adminId}/progress`, USER3)).body.error).toMatchObject({ code: 'request_not_found' });
    expect((await get(`/v1/requests/${adminId}/progress`)).body).toEqual({ progress: 1 });
  });

  it('database users log in, hold only their own keys, and no key exceeds its owner', async () => {
    const alice = await post('/v1/admin/users', { username: 'alice', password: 'correct horse battery', permissions: ['models:list', 'models:read', 'keys:create'] });
    expect(alice.status, alice.text).toBe(201);
    expect(alice.body).toEqual({ id: expect.any(Number), username: 'alice' });
    expect((await post('/v1/admin/users', { username: 'alice', password: 'another password' })).status).toBe(409);
    expect((await post('/v1/admin/users', { username: 'user2', password: 'another password' })).status).toBe(409);
    expect((await post('/v1/admin/users', { username: 'bob', password: 'short' })).body.error.param).toBe('password');

    const login = await request(server.url, 'POST', '/token', { username: 'alice', password: 'correct horse battery' });
    expect(login.status, login.text).toBe(200);
    const token = login.body.access_token as string;
    expect((await request(server.url, 'POST', '/token', { username: 'alice', password: 'wrong' })).status).toBe(401);

    const tooMuch = await post('/v1/admin/keys', { name: 'escalate', scopes: ['admin'] }, token);
    expect(tooMuch.status).toBe(400);
    expect(tooMuch.body.error.code).toBe('key_scope_not_held');
    expect((await post('/v1/admin/keys', { name: 'for-admin', owner: 'user1' }, token)).status).toBe(403);
    // Naming someone, whether they exist or not, answers alike: no account can be probed.
    for (const owner of ['ghost', '99999', 'user1']) {
      const named = await post('/v1/admin/keys', { name: 'probe', owner }, token);
      expect([named.status, named.body.error?.code], owner).toEqual([403, 'permission_denied']);
      const listed = await get(`/v1/admin/keys?owner=${owner}`, token);
      expect(listed.status, owner).toBe(200);
      expect(listed.body.every((k: { owner_username: string }) => k.owner_username === 'alice'), owner).toBe(true);
    }
    const ownByName = await post('/v1/admin/keys', { name: 'own-by-name', owner: 'alice' }, token);
    expect(ownByName.status, ownByName.text).toBe(201);
    expect((await del(`/v1/admin/keys/${ownByName.body.id}`, token)).status).toBe(200);

    const own = await newKey({ name: 'alice-reader', scopes: ['models:read'] }, token);
    clearKeys.push(own.key);
    expect((await chat(own.key)).status).toBe(200);
    // models:list is not in the key's scopes, though alice holds it.
    expect((await get('/v1/models', own.key)).status).toBe(403);

    const seen = await get('/v1/admin/keys', token);
    expect(seen.body.map((k: { owner_username: string }) => k.owner_username)).toEqual(['alice']);
    const adminKeyId = (await get('/v1/admin/keys')).body.find((k: { owner_username: string }) => k.owner_username === 'user1').id;
    expect((await get(`/v1/admin/keys/${adminKeyId}`, token)).status).toBe(404);
    expect((await del(`/v1/admin/keys/${adminKeyId}`, token)).status).toBe(404);
    expect((await get('/v1/admin/users', token)).status).toBe(403);

    // Taking a permission from the owner takes it from the key, at once.
    expect((await put(`/v1/admin/users/${alice.body.id}`, { permissions: ['models:list', 'keys:create'] })).status).toBe(200);
    expect((await chat(own.key)).status).toBe(403);
    expect((await put(`/v1/admin/users/${alice.body.id}`, { enabled: false })).status).toBe(200);
    expect((await get('/v1/models', token)).status).toBe(401);
    // A username of digits is that user's, in a body and in a query; other digits are an id.
    const digits = await post('/v1/admin/users', { username: '1', password: 'a long enough password', permissions: ['models:list'] });
    expect(digits.status, digits.text).toBe(201);
    const forDigits = await newKey({ name: 'for-1', owner: '1' });
    clearKeys.push(forDigits.key);
    expect((await get('/v1/admin/keys?owner=1')).body.map((k: { owner_username: string }) => k.owner_username)).toEqual(['1']);
    // Its id, which no user has as a name, still names it (alice's id may be 1: the name wins).
    expect(digits.body.id).not.toBe(1);
    expect((await get(`/v1/admin/keys?owner=${digits.body.id}`)).body.map((k: { owner_username: string }) => k.owner_username)).toEqual(['1']);
    expect((await del(`/v1/admin/users/${digits.body.id}`)).status).toBe(200);
    // A disabled account can own no new key, and the answer says why (it used to say "not found").
    for (const owner of ['alice', alice.body.id]) {
      const refused = await post('/v1/admin/keys', { name: 'for-disabled', owner });
      expect([refused.status, refused.body.error.code, refused.body.error.param], String(owner)).toEqual([409, 'user_disabled', 'owner']);
      expect(refused.body.detail).toContain('User alice is disabled');
    }
    expect((await request(server.url, 'POST', '/token', { username: 'alice', password: 'correct horse battery' })).status).toBe(401);
  });

  it('rpm: the request past the limit gets 429 with Retry-After and x-ratelimit headers; both replicas share the budget', async () => {
    const created = await newKey({ name: 'rpm', limits: { rpm: 4 } });
    clearKeys.push(created.key);
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await chat(created.key));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect(answers.map((a) => a.headers.get('x-ratelimit-remaining-requests'))).toEqual(['3', '2', '1', '0']);
    expect(answers[0]!.headers.get('x-ratelimit-limit-requests')).toBe('4');
    expect(answers[0]!.headers.get('x-ratelimit-reset-requests')).toMatch(/^(\d+m)?\d+(ms|s)$/);
    const refused = await chat(created.key);
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'key_rate_limited', type: 'rate_limit_error' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    // Other keys are not touched.
    expect((await chat(ADMIN_KEY)).status).toBe(200);
    const replicas = await get('/v1/models/sim/replicas');
    expect(replicas.body).toHaveLength(2);
  });

  it('tpm: max_tokens past the budget is refused up front; a stream that runs over it is stopped with an error event', async () => {
    const created = await newKey({ name: 'tpm', limits: { tpm: 40 } });
    clearKeys.push(created.key);
    const upFront = await chat(created.key, { max_tokens: 41 });
    expect(upFront.status).toBe(429);
    expect(upFront.body.error.message).toContain('tokens');
    expect([upFront.headers.get('x-should-retry'), upFront.headers.get('retry-after')]).toEqual(['false', null]);

    // No max_tokens: admitted, and cut off where the budget ends.
    const stream = await readSse(server.url, '/v1/chat/completions', { model: 'sim', messages: [{ role: 'user', content: 'two words' }], stream: true }, { headers: as(created.key) });
    const events = jsonEvents(stream);
    const tokens = events.filter((e) => e.choices?.[0]?.delta?.content).length;
    expect(tokens).toBeGreaterThan(0);
    expect(tokens).toBeLessThanOrEqual(40);
    expect(events.at(-1)?.error?.code).toBe('key_rate_limited');
    expect(stream.data).not.toContain('[DONE]');

    const spent = await chat(created.key, { max_tokens: 1 });
    expect(spent.status).toBe(429);
    expect(spent.headers.get('x-ratelimit-remaining-tokens')).toBe('0');
    expect(Number(spent.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('max_parallel: a second request while one is in flight gets 429, and is admitted once it ends', async () => {
    const created = await newKey({ name: 'parallel', limits: { max_parallel: 1 } });
    clearKeys.push(created.key);
    const slow = readSse(server.url, '/v1/chat/completions', { model: 'sim', messages: [{ role: 'user', content: 'hi' }], max_tokens: 150, stream: true }, { headers: as(created.key) });
    await new Promise((r) => setTimeout(r, 150));
    const second = await chat(created.key);
    expect(second.status).toBe(429);
    expect(second.body.error.message).toContain('at once');
    expect((await slow).data.at(-1)).toBe('[DONE]');
    expect((await chat(created.key)).status).toBe(200);
  });

  it('usage by key, model and hour; totals in /metrics with key ids, never keys', async () => {
    const created = await newKey({ name: 'usage' });
    clearKeys.push(created.key);
    for (let i = 0; i < 3; i++) expect((await chat(created.key, { max_tokens: 6 })).status).toBe(200);
    expect((await embed(created.key)).status).toBe(200);
    expect((await post('/v1/chat/completions', { model: 'nope', messages: [{ role: 'user', content: 'x' }] }, created.key)).status).toBe(404);

    const usage = await get(`/v1/admin/usage?key_id=${created.id}`);
    expect(usage.status).toBe(200);
    const byModel = Object.fromEntries(usage.body.map((r: { model: string }) => [r.model, r]));
    expect(byModel.sim).toMatchObject({ key_id: created.id, requests: 3, prompt_tokens: 6, completion_tokens: 18, errors: 0 });
    expect(byModel.sim.hour).toMatch(/T\d\d:00:00\.000Z$/);
    expect(byModel.embed).toMatchObject({ requests: 1, errors: 0 });
    expect(byModel.embed.prompt_tokens).toBeGreaterThan(0);
    expect(byModel['(unknown)']).toMatchObject({ requests: 1, errors: 1 });
    expect((await get(`/v1/admin/usage?model=sim&from=2000-01-01T00:00:00Z&to=2000-01-02T00:00:00Z`)).body).toEqual([]);
    // A row is an hour, counted when the hour starts in [from, to): an empty range is empty,
    // and a range that starts after the hour began does not count it (before, `from` was
    // rounded down to its hour, so back-to-back ranges each counted the same hour).
    const hour = byModel.sim.hour as string;
    const inHour = (ms: number) => encodeURIComponent(new Date(Date.parse(hour) + ms).toISOString());
    const ofSim = async (query: string) => (await get(`/v1/admin/usage?key_id=${created.id}&model=sim&${query}`)).body as unknown[];
    expect(await ofSim(`from=${inHour(0)}&to=${inHour(3_600_000)}`)).toHaveLength(1);
    expect(await ofSim(`from=${inHour(0)}&to=${inHour(0)}`)).toEqual([]);
    expect(await ofSim(`from=${inHour(1)}&to=${inHour(7_200_000)}`)).toEqual([]);
    expect(await ofSim(`from=${inHour(-1)}&to=${inHour(1)}`)).toHaveLength(1);
    // A query parameter is named as sent, whatever its parsed shape (it was `group_by.0`).
    expect((await get('/v1/admin/usage?group_by=foo')).body.error).toMatchObject({ code: 'invalid_field', param: 'group_by' });

    const metrics = await get('/metrics');
    expect(metrics.text).toMatch(new RegExp(`hangar_key_requests_total\\{key_id="${created.id}",model="sim",outcome="ok"\\} 3`));
    expect(metrics.text).toMatch(new RegExp(`hangar_key_tokens_total\\{key_id="${created.id}",model="sim",kind="completion"\\} 18`));
    expect(metrics.text).toContain('hangar_key_rate_limited_total{key_id=');
    expect(metrics.text).not.toContain('model="nope"');
    for (const key of clearKeys) expect(metrics.text).not.toContain(key);
  });

  it("drops a key's series with the model they name, and all of them with the key", async () => {
    const created = await newKey({ name: 'churn' });
    clearKeys.push(created.key);
    expect((await post('/v1/models', { model_name: 'simulator', model_type: 'LLM', model_engine: 'simulator', model_uid: 'sim-churn', step_ms: 1, ttft_ms: 0 })).status).toBe(200);
    for (const model of ['sim-churn', 'sim']) {
      expect((await post('/v1/chat/completions', { model, messages: [{ role: 'user', content: 'x' }], max_tokens: 2 }, created.key)).status).toBe(200);
    }
    const series = async () => ((await get('/metrics')).text.match(new RegExp(`^hangar_key_\\w+\\{key_id="${created.id}",model="[^"]+"`, 'gm')) ?? []).join('\n');
    expect(await series()).toContain('model="sim-churn"');
    expect((await del('/v1/models/sim-churn')).status).toBe(200);
    // Before, every uid a key had used stayed in /metrics (and in memory) for good.
    await expect.poll(series, { timeout: 10_000 }).not.toContain('model="sim-churn"');
    expect(await series()).toContain('model="sim"');
    expect((await del(`/v1/admin/keys/${created.id}`)).status).toBe(200);
    expect(await series()).toBe('');
  });

  it("keeps a revoked or deleted key's series gone, and counts a refused request as an error in them", async () => {
    const seriesOf = async (id: number) => ((await get('/metrics')).text.match(new RegExp(`^hangar_key_\\w+\\{key_id="${id}"[^\n]*`, 'gm')) ?? []).join('\n');
    // Revoked while its stream runs: the stream's end must not bring the series back.
    const inflight = await newKey({ name: 'inflight' });
    const streaming = readSse(server.url, '/v1/chat/completions', { model: 'sim', messages: [{ role: 'user', content: 'x' }], max_tokens: 150, stream: true }, { headers: as(inflight.key) });
    await new Promise((r) => setTimeout(r, 200));
    expect((await del(`/v1/admin/keys/${inflight.id}`)).status).toBe(200);
    await streaming;
    expect(await seriesOf(inflight.id)).toBe('');
    // Deleting a user revokes their keys, and their series go too.
    expect((await post('/v1/admin/users', { username: 'eve', password: 'correct horse battery', permissions: ['models:read'] })).status).toBe(201);
    const eves = await newKey({ name: 'eve-key', owner: 'eve' });
    expect((await chat(eves.key)).status).toBe(200);
    expect(await seriesOf(eves.id)).toContain('outcome="ok"');
    const eve = (await get('/v1/admin/users')).body.find((u: { username: string }) => u.username === 'eve');
    expect((await del(`/v1/admin/users/${eve.id}`)).status).toBe(200);
    expect(await seriesOf(eves.id)).toBe('');
    // A request refused by a limit counts as a request and an error, as in the usage ledger.
    const limited = await newKey({ name: 'one-rpm', limits: { rpm: 1 } });
    clearKeys.push(limited.key);
    expect([(await chat(limited.key)).status, (await chat(limited.key)).status]).toEqual([200, 429]);
    const series = await seriesOf(limited.id);
    expect(series).toContain(`hangar_key_requests_total{key_id="${limited.id}",model="sim",outcome="error"} 1`);
    expect(series).toContain(`hangar_key_requests_total{key_id="${limited.id}",model="sim",outcome="ok"} 1`);
  });

  it("keeps a revoked key's usage its owner's: in the owner's own view and under their name", async () => {
    expect((await post('/v1/admin/users', { username: 'dave', password: 'correct horse battery', permissions: ['models:read', 'keys:create'] })).status).toBe(201);
    const token = (await request(server.url, 'POST', '/token', { username: 'dave', password: 'correct horse battery' })).body.access_token as string;
    const lost = await newKey({ name: 'lost' }, token);
    for (let i = 0; i < 2; i++) expect((await chat(lost.key)).status).toBe(200);
    expect((await del(`/v1/admin/keys/${lost.id}`, token)).status).toBe(200);
    // Before, the owner's own view lost it, and the admin's listed it as "(deleted key)".
    const own = await get(`/v1/admin/usage?key_id=${lost.id}`, token);
    expect(own.body.map((r: { requests: number }) => r.requests)).toEqual([2]);
    const mine = await get('/v1/admin/usage?group_by=user', token);
    expect(mine.body).toEqual([expect.objectContaining({ user: 'dave', requests: 2 })]);
    const all = await get('/v1/admin/usage?group_by=user');
    expect(all.body.filter((r: { user: string }) => r.user === 'dave').map((r: { requests: number }) => r.requests)).toEqual([2]);
    expect(all.body.some((r: { user: string }) => r.user === '(deleted key)')).toBe(false);
  });

  it('a key with restrictions of its own cannot make or change keys, itself included: it could lift them', async () => {
    const token = (await request(server.url, 'POST', '/token', { username: 'dave', password: 'correct horse battery' })).body.access_token as string;
    const narrow = await newKey({ name: 'narrow', scopes: ['keys:create', 'keys:read', 'models:read'], model_permissions: ['sim'], limits: { rpm: 1000 } }, token);
    clearKeys.push(narrow.key);
    const lift = await put(`/v1/admin/keys/${narrow.id}`, { model_permissions: [], scopes: null, limits: { rpm: null } }, narrow.key);
    expect([lift.status, lift.body.error?.code], lift.text).toEqual([403, 'key_restricted']);
    expect(lift.body.error.message).toContain('scopes, model_permissions, limits');
    const mint = await post('/v1/admin/keys', { name: 'minted' }, narrow.key);
    expect([mint.status, mint.body.error?.code]).toEqual([403, 'key_restricted']);
    // Unchanged, and still usable for what it may do; revoking (which only takes away) stays allowed.
    expect((await get(`/v1/admin/keys/${narrow.id}`, token)).body).toMatchObject({ model_permissions: ['sim'], scopes: ['keys:create', 'keys:read', 'models:read'] });
    expect((await chat(narrow.key)).status).toBe(200);
    expect((await del(`/v1/admin/keys/${narrow.id}`, narrow.key)).status).toBe(200);
    // A key without restrictions acts as its owner does.
    const plain = await newKey({ name: 'plain' }, token);
    clearKeys.push(plain.key);
    const made = await post('/v1/admin/keys', { name: 'made-by-key', model_permissions: ['sim'] }, plain.key);
    expect(made.status, made.text).toBe(201);
    clearKeys.push(made.body.key);
  });

  it('keys:manage and users:manage act only for users who hold no more than the caller, and grant only what they hold', async () => {
    const login = async (username: string) => (await request(server.url, 'POST', '/token', { username, password: 'correct horse battery' })).body.access_token as string;
    for (const [username, permissions] of [['keymgr', ['keys:manage']], ['um', ['users:manage']], ['dbadmin', ['admin']], ['plain', ['models:read']], ['nobody', []]] as const) {
      expect((await post('/v1/admin/users', { username, password: 'correct horse battery', permissions })).status, username).toBe(201);
    }
    const ids = Object.fromEntries((await get('/v1/admin/users')).body.filter((u: { id: number | null }) => u.id !== null).map((u: { username: string; id: number }) => [u.username, u.id]));
    const keymgr = await login('keymgr');
    // A key of an admin would be the admin's power in keymgr's hands: before, it was 201 with the clear key.
    for (const owner of ['user1', 'dbadmin', String(ids.dbadmin)]) {
      const refused = await post('/v1/admin/keys', { name: 'takeover', owner }, keymgr);
      expect([refused.status, refused.body.error?.code], owner).toEqual([403, 'user_holds_more']);
      expect(refused.body.detail).toContain('admin');
    }
    // `plain` holds models:read, which keymgr does not: refused too; a key for a user who holds no more is made.
    expect((await post('/v1/admin/keys', { name: 'for-plain', owner: 'plain' }, keymgr)).body.error?.code).toBe('user_holds_more');
    const forNobody = await post('/v1/admin/keys', { name: 'for-nobody', owner: 'nobody' }, keymgr);
    expect(forNobody.status, forNobody.text).toBe(201);
    expect((await get(`/v1/admin/keys/${forNobody.body.id}`)).body.owner_username).toBe('nobody');

    // Nor may it change a stronger user's key: lifting an admin key's scopes made it an admin key.
    const narrowAdmin = await newKey({ name: 'admin-narrow', scopes: ['models:read'] });
    clearKeys.push(narrowAdmin.key);
    const lifted = await put(`/v1/admin/keys/${narrowAdmin.id}`, { scopes: null }, keymgr);
    expect([lifted.status, lifted.body.error?.code], lifted.text).toEqual([403, 'user_holds_more']);
    expect((await get(`/v1/admin/keys/${narrowAdmin.id}`)).body.scopes).toEqual(['models:read']);

    const um = await login('um');
    // A restricted key may not act on users either: setting its owner's password was a way out of its limits.
    const umExpiring = await newKey({ name: 'um-ci', owner: 'um', expires_at: Math.floor(Date.now() / 1000) + 600 });
    clearKeys.push(umExpiring.key);
    const escape = await put(`/v1/admin/users/${ids.um}/password`, { new_password: 'Takeover12345' }, umExpiring.key);
    expect([escape.status, escape.body.error?.code], escape.text).toEqual([403, 'key_restricted']);
    // Xinference 3's two guards: no takeover of who holds more, no grant of what the caller lacks.
    for (const [what, res] of [
      ['password', await put(`/v1/admin/users/${ids.dbadmin}/password`, { new_password: 'Takeover12345' }, um)],
      ['disable', await put(`/v1/admin/users/${ids.dbadmin}`, { enabled: false }, um)],
      ['delete', await del(`/v1/admin/users/${ids.dbadmin}`, um)],
      ['plain password', await put(`/v1/admin/users/${ids.plain}/password`, { new_password: 'Takeover12345' }, um)],
    ] as const) {
      expect([res.status, res.body.error?.code], what).toEqual([403, 'user_holds_more']);
    }
    expect((await request(server.url, 'POST', '/token', { username: 'dbadmin', password: 'correct horse battery' })).status).toBe(200);
    for (const permissions of [['admin'], ['models:read'], ['users:manage', 'models:code']]) {
      const grant = await post('/v1/admin/users', { username: 'minted', password: 'correct horse battery', permissions }, um);
      expect([grant.status, grant.body.error?.code, grant.body.error?.param], permissions.join()).toEqual([403, 'permission_not_grantable', 'permissions']);
    }
    const grantUp = await put(`/v1/admin/users/${ids.nobody}`, { permissions: ['admin'] }, um);
    expect([grantUp.status, grantUp.body.error?.code]).toEqual([403, 'permission_not_grantable']);
    const helper = await post('/v1/admin/users', { username: 'deputy', password: 'correct horse battery', permissions: ['users:manage'] }, um);
    expect(helper.status, helper.text).toBe(201);
    expect((await put(`/v1/admin/users/${helper.body.id}/password`, { new_password: 'another long password' }, um)).status).toBe(200);
    expect((await put(`/v1/admin/users/${ids.nobody}`, { enabled: false }, um)).status).toBe(200);

    // A key that expires may not make keys (one without expiry) or lift its own expiry.
    const dave = (await request(server.url, 'POST', '/token', { username: 'dave', password: 'correct horse battery' })).body.access_token as string;
    const expiring = await newKey({ name: 'short-lived', expires_at: Math.floor(Date.now() / 1000) + 600 }, dave);
    clearKeys.push(expiring.key);
    for (const res of [await post('/v1/admin/keys', { name: 'forever' }, expiring.key), await put(`/v1/admin/keys/${expiring.id}`, { expires_at: null }, expiring.key)]) {
      expect([res.status, res.body.error?.code]).toEqual([403, 'key_restricted']);
      expect(res.body.detail).toContain('expires_at');
    }
    // Past the last second an ISO date can say: a 400 naming the field, not a 500.
    for (const res of [await post('/v1/admin/keys', { name: 'far', expires_at: 99_999_999_999_999 }), await put(`/v1/admin/keys/${expiring.id}`, { expires_at: 99_999_999_999_999 })]) {
      expect([res.status, res.body.error?.param], res.text).toEqual([400, 'expires_at']);
    }
    // The audit log names the key's owner, not the body's `owner: null`.
    const own = await newKey({ name: 'owner-null', owner: null }, dave);
    clearKeys.push(own.key);
    const entry = (await get('/v1/admin/audit?limit=1000')).body.find((e: { action: string; target: string }) => e.action === 'key.create' && e.target === `key:${own.id}`);
    expect(entry.detail.owner).toBe('dave');
  });

  it("gives a new account under a deleted user's name none of the old one's stored responses or usage", async () => {
    const made = await post('/v1/admin/users', { username: 'erin', password: 'correct horse battery', permissions: ['models:read', 'keys:create'] });
    expect(made.status, made.text).toBe(201);
    const login = async () => (await request(server.url, 'POST', '/token', { username: 'erin', password: 'correct horse battery' })).body.access_token as string;
    const first = await login();
    const stored = await post('/v1/responses', { model: 'sim', input: 'ERIN SECRET', max_output_tokens: 4 }, first);
    expect(stored.status, stored.text).toBe(200);
    const key = await newKey({ name: 'erin-key' }, first);
    expect((await chat(key.key)).status).toBe(200);
    expect((await del(`/v1/admin/keys/${key.id}`, first)).status).toBe(200);
    expect((await del(`/v1/admin/users/${made.body.id}`)).status).toBe(200);

    expect((await post('/v1/admin/users', { username: 'erin', password: 'another horse battery', permissions: ['models:read', 'keys:create'] })).status).toBe(201);
    const second = (await request(server.url, 'POST', '/token', { username: 'erin', password: 'another horse battery' })).body.access_token as string;
    expect((await get(`/v1/responses/${stored.body.id}`, second)).status).toBe(404);
    expect((await get(`/v1/responses/${stored.body.id}/input_items`, second)).status).toBe(404);
    expect((await get('/v1/admin/usage?group_by=user', second)).body).toEqual([]);
    // The old usage is still counted, under a name no account can take.
    const all = (await get('/v1/admin/usage?group_by=user')).body as Array<{ user: string; requests: number }>;
    expect(all.find((r) => r.user === `erin (deleted user ${made.body.id})`)?.requests).toBe(1);
  });

  it('sums usage per hour or day and per key, user or model, and exports the same as CSV', async () => {
    const created = await newKey({ name: 'usage-sum' });
    clearKeys.push(created.key);
    for (let i = 0; i < 2; i++) expect((await chat(created.key, { max_tokens: 4 })).status).toBe(200);
    expect((await embed(created.key)).status).toBe(200);
    const raw = (await get(`/v1/admin/usage?key_id=${created.id}`)).body as Array<Record<string, number>>;
    const total = (rows: Array<Record<string, number>>, field: string) => rows.reduce((sum, r) => sum + r[field]!, 0);

    const byDay = await get(`/v1/admin/usage?key_id=${created.id}&group_by=model&bucket=day`);
    expect(byDay.status).toBe(200);
    for (const row of byDay.body) expect(row.bucket).toMatch(/T00:00:00\.000Z$/);
    expect(byDay.body.find((r: { model: string }) => r.model === 'sim')).toMatchObject({ requests: 2, completion_tokens: 8 });
    expect(byDay.body.find((r: { model: string }) => r.model === 'embed')).toMatchObject({ requests: 1 });
    const byUser = (await get(`/v1/admin/usage?key_id=${created.id}&group_by=user,key`)).body as Array<Record<string, number | string>>;
    expect(new Set(byUser.map((r) => `${r.user}/${r.key_id}`))).toEqual(new Set([`user1/${created.id}`]));
    for (const field of ['requests', 'prompt_tokens', 'completion_tokens', 'errors']) {
      expect(total(byDay.body, field), field).toBe(total(raw, field));
      expect(total(byUser as Array<Record<string, number>>, field), field).toBe(total(raw, field));
    }

    const csv = await get(`/v1/admin/usage?key_id=${created.id}&group_by=model&bucket=day&format=csv`);
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    const [header, ...lines] = csv.text.trim().split('\n');
    expect(header).toBe('bucket,model,requests,prompt_tokens,completion_tokens,errors');
    expect(lines.map((l) => l.split(','))).toEqual(byDay.body.map((r: Record<string, unknown>) => [r.bucket, r.model, r.requests, r.prompt_tokens, r.completion_tokens, r.errors].map(String)));
    expect((await get(`/v1/admin/usage?key_id=${created.id}&format=csv`)).text.split('\n')[0]).toBe('key_id,model,hour,requests,prompt_tokens,completion_tokens,errors');
    // A model uid a spreadsheet would run as a formula is written as text.
    const formula = '=HYPERLINK("x")';
    const launched = await post("/v1/models", { model_name: "simulator", model_type: "LLM", model_engine: "simulator", model_uid: formula, step_ms: 1, ttft_ms: 0 });
    expect(launched.status, launched.text).toBe(200);
    expect((await post('/v1/chat/completions', { model: formula, messages: [{ role: 'user', content: 'x' }], max_tokens: 2 }, created.key)).status).toBe(200);
    const escaped = (await get(`/v1/admin/usage?key_id=${created.id}&group_by=model&format=csv`)).text;
    expect(escaped).toContain(`"'=HYPERLINK(""x"")"`);
    expect(escaped.split('\n').some((line) => line.includes(',=HYPERLINK'))).toBe(false);
    expect((await del(`/v1/models/${encodeURIComponent(formula)}`)).status).toBe(200);
    // A request without a database key (here the auth config file's key) counts as anonymous, seen by admins only.
    const before = (await get('/v1/admin/usage?group_by=user&model=sim')).body as Array<{ user: string; requests: number }>;
    expect((await chat(ADMIN_KEY)).status).toBe(200);
    const after = (await get('/v1/admin/usage?group_by=user&model=sim')).body as Array<{ user: string; requests: number }>;
    const anonymous = (rows: typeof before) => rows.filter((r) => r.user === 'anonymous').reduce((sum, r) => sum + r.requests, 0);
    expect(anonymous(after)).toBe(anonymous(before) + 1);
    expect(((await get('/v1/admin/usage?model=sim')).body as Array<{ key_id: number | null }>).some((r) => r.key_id === null)).toBe(true);
    for (const bad of ['group_by=owner', 'bucket=fortnight', 'format=xml']) {
      const refused = await get(`/v1/admin/usage?${bad}`);
      expect(refused.status, bad).toBe(400);
      expect(refused.body.error.param, bad).toContain(bad.split('=')[0]);
    }
  });

  it('counts every choice of an n > 1 stream, the prompt once', async () => {
    const created = await newKey({ name: 'usage-n' });
    clearKeys.push(created.key);
    const stream = await readSse(server.url, '/v1/chat/completions', { model: 'sim', messages: [{ role: 'user', content: 'two words' }], max_tokens: 3, n: 2, stream: true }, { headers: as(created.key) });
    expect(stream.data.at(-1)).toBe('[DONE]');
    const [row] = (await get(`/v1/admin/usage?key_id=${created.id}`)).body;
    expect(row).toMatchObject({ model: 'sim', requests: 1, prompt_tokens: 2, completion_tokens: 6, errors: 0 });
  });

  it('counts each prompt of a completions list once and every choice, streamed or not', async () => {
    const body = { model: 'sim', prompt: ['one', 'two words here'], max_tokens: 3, n: 2 };
    for (const stream of [false, true]) {
      const created = await newKey({ name: `usage-list-${stream}` });
      clearKeys.push(created.key);
      if (stream) {
        const answer = await readSse(server.url, '/v1/completions', { ...body, stream: true }, { headers: as(created.key) });
        expect(answer.data.at(-1)).toBe('[DONE]');
      } else {
        const answer = await request(server.url, 'POST', '/v1/completions', body, as(created.key));
        expect(answer.status, answer.text).toBe(200);
        expect(answer.body.usage).toEqual({ prompt_tokens: 4, completion_tokens: 12, total_tokens: 16 });
      }
      const [row] = (await get(`/v1/admin/usage?key_id=${created.id}`)).body;
      expect(row, `stream: ${stream}`).toMatchObject({ model: 'sim', requests: 1, prompt_tokens: 4, completion_tokens: 12, errors: 0 });
    }
  });

  it('writes every admin action to the audit log, readable by admins only', async () => {
    const audit = await get('/v1/admin/audit?limit=1000');
    expect(audit.status).toBe(200);
    const actions = audit.body.map((e: { action: string }) => e.action);
    for (const a of ['user.create', 'user.update', 'key.create', 'key.update', 'key.revoke']) expect(actions).toContain(a);
    expect(audit.body.every((e: { actor: string }) => ['user1', 'alice', 'dave', 'erin', 'keymgr', 'um', '(unauthenticated)'].includes(e.actor))).toBe(true);
    expect(JSON.stringify(audit.body)).not.toMatch(/correct horse|sk-[A-Za-z0-9]{48}/);
    expect((await get('/v1/admin/audit', 'sk-m6jEzEwmCc4iQ')).status).toBe(403);
  });

  it('keeps keys, limits, usage and audit across a restart; no clear key on disk, in logs or events', async () => {
    const limited = await newKey({ name: 'survivor', limits: { rpm: 2 } });
    clearKeys.push(limited.key);
    expect((await chat(limited.key)).status).toBe(200);
    const usageBefore = (await get(`/v1/admin/usage?key_id=${limited.id}`)).body;
    const auditBefore = (await get('/v1/admin/audit?limit=1000')).body.length;

    const logs = JSON.stringify(server.logs) + server.stderr();
    const events = await get('/v1/models/sim/events');
    await server.stop();
    for (const file of filesUnder(server.home)) {
      const bytes = readFileSync(file);
      for (const key of clearKeys) expect(bytes.includes(key), `${file} holds a clear key`).toBe(false);
    }
    for (const key of clearKeys) {
      expect(logs).not.toContain(key);
      expect(events.text).not.toContain(key);
    }
    const db = path.join(server.home, 'state', 'hangar.db');
    expect(statSync(db).mode & 0o777).toBe(0o600);

    server = await startServer({ home: server.home, args: ['--auth-config', configFile, '--no-restore'] });
    expect((await get(`/v1/admin/usage?key_id=${limited.id}`)).body).toEqual(usageBefore);
    expect((await get('/v1/admin/audit?limit=1000')).body.length).toBe(auditBefore);
    const key = (await get(`/v1/admin/keys/${limited.id}`)).body;
    expect(key.limits).toEqual({ rpm: 2, tpm: null, max_parallel: null });
    // The key authenticates (the model is not running after --no-restore: 404, not 401).
    const res = await request(server.url, 'GET', '/v1/models', undefined, as(limited.key));
    expect(res.status).toBe(200);
  }, 120_000);

  it('kill -9 during a burst of key creation leaves a consistent database', async () => {
    const burst = Array.from({ length: 60 }, (_, i) => post('/v1/admin/keys', { name: `burst-${i}` }).catch(() => null));
    await new Promise((r) => setTimeout(r, 30));
    await server.kill();
    const answered = (await Promise.all(burst)).filter((r) => r?.status === 201).map((r) => r!.body as { id: number; key: string });

    const file = path.join(server.home, 'state', 'hangar.db');
    const db = new Database(file, { readonly: false });
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    const rows = db.prepare("SELECT id, length(key_hash) AS hash, key_prefix FROM api_keys WHERE name LIKE 'burst-%'").all() as Array<{ id: number; hash: number; key_prefix: string }>;
    db.close();
    // Every key that was answered is there whole; none is half-written.
    for (const a of answered) expect(rows.map((r) => r.id)).toContain(a.id);
    for (const r of rows) expect(r).toMatchObject({ hash: 32, key_prefix: expect.stringMatching(/^sk-[A-Za-z0-9]{9}$/) });

    server = await startServer({ home: server.home, args: ['--auth-config', configFile, '--no-restore'] });
    for (const a of answered.slice(0, 5)) expect((await request(server.url, 'GET', '/v1/models', undefined, as(a.key))).status).toBe(200);
  }, 120_000);
});

describe('database users without an auth config file', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startServer();
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    await removeHome(server.home);
  });

  it('the first user must hold admin, and creating it turns authentication on', async () => {
    expect((await request(server.url, 'GET', '/v1/cluster/auth')).body).toEqual({ auth: false });
    const reader = await request(server.url, 'POST', '/v1/admin/users', { username: 'reader', password: 'long enough', permissions: ['models:read'] });
    expect(reader.status).toBe(400);
    expect(reader.body.error.code).toBe('first_user_not_admin');
    const admin = await request(server.url, 'POST', '/v1/admin/users', { username: 'root', password: 'long enough', permissions: ['admin'] });
    expect(admin.status, admin.text).toBe(201);

    expect((await request(server.url, 'GET', '/v1/cluster/auth')).body).toEqual({ auth: true });
    expect((await request(server.url, 'GET', '/v1/models')).status).toBe(401);
    const login = await request(server.url, 'POST', '/token', { username: 'root', password: 'long enough' });
    expect(login.status).toBe(200);
    const token = login.body.access_token as string;
    expect((await request(server.url, 'GET', '/v1/models', undefined, { authorization: `Bearer ${token}` })).status).toBe(200);
    // The last admin cannot lock everyone out.
    const self = await request(server.url, 'DELETE', `/v1/admin/users/${admin.body.id}`, undefined, { authorization: `Bearer ${token}` });
    expect(self.status).toBe(400);
    const key = await request(server.url, 'POST', '/v1/admin/keys', { name: 'ops', limits: { rpm: 10 } }, { authorization: `Bearer ${token}` });
    expect(key.status).toBe(201);
    expect((await request(server.url, 'GET', '/v1/models', undefined, { authorization: `Bearer ${key.body.key}` })).status).toBe(200);

    // Tokens and users survive a restart (the signing secret is kept in the database).
    await server.stop();
    server = await startServer({ home: server.home });
    expect((await request(server.url, 'GET', '/v1/models', undefined, { authorization: `Bearer ${token}` })).status).toBe(200);
  }, 60_000);

  it('holds guesses sent at once to the failures left before the lockout: each costs a scrypt, and all were checked', async () => {
    const burst = await Promise.all(Array.from({ length: 20 }, (_, i) => request(server.url, 'POST', '/token', { username: 'root', password: `guess-${i}` })));
    const checked = burst.filter((r) => r.status === 401).length;
    expect(checked).toBeGreaterThanOrEqual(3);
    expect(checked).toBeLessThanOrEqual(10);
    expect(burst.every((r) => r.status === 401 || r.body.error?.code === 'login_throttled' || r.body.error?.code === 'login_locked'), JSON.stringify(burst.map((r) => r.status))).toBe(true);
    // The right password waits as any attempt does.
    expect((await request(server.url, 'POST', '/token', { username: 'root', password: 'long enough' })).status).toBe(429);
  }, 60_000);

  it('warns at start when authentication is on and no database user holds admin (the auth file left out)', async () => {
    const work = await makeHome('hangar-no-admin-');
    const configFile = path.join(work, 'auth.json');
    await writeFile(configFile, JSON.stringify(upstreamAuthConfig()));
    const withFile = await startServer({ args: ['--auth-config', configFile] });
    const home = withFile.home;
    try {
      const made = await request(withFile.url, 'POST', '/v1/admin/users', { username: 'plain', password: 'long enough', permissions: ['models:read'] }, { authorization: `Bearer ${ADMIN_KEY}` });
      expect(made.status, made.text).toBe(201);
      await withFile.stop();
      // Every route then answers 401, and nothing said why.
      const without = await startServer({ home });
      await without.stop();
      expect(without.logs.some((l) => l.level === 40 && JSON.stringify(l).includes('no enabled database user holds admin'))).toBe(true);
    } finally {
      await removeHome(home);
      await removeHome(work);
    }
  }, 60_000);
});

import { readdir, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import path from 'node:path';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tinySklearn } from './harness/fixtures.js';
import { client, request } from './harness/http.js';
import { runtimePids } from './harness/processes.js';
import { makeHome, removeHome, startServer, type TestServer } from './harness/server.js';

interface Case {
  name: string;
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  body?: unknown;
  status: number;
  /** Words the message must contain (the field or name at fault). */
  mentions: string[];
  code?: string;
  param?: string;
}

async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) out.push(path.join(entry.parentPath, entry.name));
  }
  return out;
}

describe('bad requests get a clear error and leave nothing behind', () => {
  let server: TestServer;
  let work: string;
  let goodModel: string;
  let corruptModel: string;
  const long = 'u'.repeat(101);

  beforeAll(async () => {
    work = await makeHome('hangar-fixtures-');
    goodModel = tinySklearn().modelPath;
    corruptModel = path.join(work, 'corrupt.joblib');
    await writeFile(corruptModel, 'this is not a joblib file');
    server = await startServer();
    const api = client(server.url);
    for (const [name, uri] of [['good-clf', goodModel], ['corrupt-clf', corruptModel]]) {
      const res = await api.post('/v1/model_registrations/flexible', { model: JSON.stringify({ model_name: name, model_uri: uri, launcher: 'sklearn' }), persist: true });
      expect(res.status, res.text).toBe(200);
    }
    expect((await api.post('/v1/models', { model_name: 'good-clf', model_type: 'flexible', model_uid: 'good' })).status).toBe(200);
  });

  afterAll(async () => {
    await server?.stop();
    await removeHome(server.home);
    await removeHome(work);
  });

  const flex = (def: Record<string, unknown>) => ({ model: JSON.stringify(def), persist: true });
  const cases = (): Case[] => [
    { name: 'launch without model_name', method: 'POST', path: '/v1/models', body: { model_type: 'flexible' }, status: 400, mentions: ['model_name'], param: 'model_name' },
    { name: 'LLM launch without engine', method: 'POST', path: '/v1/models', body: { model_name: 'qwen2.5-instruct' }, status: 400, mentions: ['model_engine'], code: 'missing_model_engine' },
    { name: 'launch of an unknown type', method: 'POST', path: '/v1/models', body: { model_name: 'x', model_type: 'hologram' }, status: 400, mentions: ['Unsupported model type: hologram'] },
    { name: 'registrations of an unknown type', method: 'GET', path: '/v1/model_registrations/hologram', status: 400, mentions: ['hologram'], code: 'unsupported_model_type' },
    { name: 'uid with a slash', method: 'POST', path: '/v1/models', body: { model_name: 'good-clf', model_type: 'flexible', model_uid: 'a/b' }, status: 400, mentions: ['model UID', '/'], param: 'model_uid' },
    { name: 'uid of 101 characters', method: 'POST', path: '/v1/models', body: { model_name: 'good-clf', model_type: 'flexible', model_uid: long }, status: 400, mentions: ['model UID', '101'] },
    { name: 'empty uid', method: 'POST', path: '/v1/models', body: { model_name: 'good-clf', model_type: 'flexible', model_uid: '' }, status: 400, mentions: ['model UID'] },
    // No URL could name these to stop them: refused before they run.
    { name: 'uid with a lone surrogate', method: 'POST', path: '/v1/models', body: { model_name: 'good-clf', model_type: 'flexible', model_uid: 'x\ud800y' }, status: 400, mentions: ['lone surrogate'], param: 'model_uid' },
    { name: 'uid with a C1 control character', method: 'POST', path: '/v1/models', body: { model_name: 'good-clf', model_type: 'flexible', model_uid: 'x\u0085y' }, status: 400, mentions: ['character code 133'], param: 'model_uid' },
    { name: 'registration name starting with a dot', method: 'POST', path: '/v1/model_registrations/flexible', body: flex({ model_name: '..', model_uri: goodModel, launcher: 'sklearn' }), status: 400, mentions: ['"."'], code: 'invalid_model_name' },
    { name: 'registration name of 101 characters', method: 'POST', path: '/v1/model_registrations/flexible', body: flex({ model_name: long, model_uri: goodModel, launcher: 'sklearn' }), status: 400, mentions: ['at most 100'], code: 'invalid_model_name' },
    // fastify's own refusals, in the contract's shape.
    { name: 'path escape that is not UTF-8', method: 'GET', path: '/v1/models/x%ED%A0%80y', status: 400, mentions: ['percent-escape'], code: 'bad_url' },
    { name: 'path parameter past any uid', method: 'DELETE', path: `/v1/models/${'a'.repeat(2100)}`, status: 414, mentions: ['2048'], code: 'path_segment_too_long' },
    { name: 'describe unknown uid', method: 'GET', path: '/v1/models/nope', status: 404, mentions: ['nope'], code: 'model_not_found' },
    { name: 'terminate unknown uid', method: 'DELETE', path: '/v1/models/nope', status: 404, mentions: ['nope'] },
    { name: 'cancel unknown uid', method: 'POST', path: '/v1/models/nope/cancel', status: 404, mentions: ['nope'] },
    { name: 'replicas of unknown uid', method: 'GET', path: '/v1/models/nope/replicas', status: 404, mentions: ['nope'], param: 'model_uid' },
    { name: 'events of unknown uid', method: 'GET', path: '/v1/models/nope/events', status: 404, mentions: ['nope'], param: 'model_uid' },
    { name: 'infer on unknown uid', method: 'POST', path: '/v1/flexible/infers', body: { model: 'nope', args: [] }, status: 404, mentions: ['nope'] },
    { name: 'malformed JSON on launch', method: 'POST', path: '/v1/models', body: '{"model_name": ', status: 400, mentions: ['JSON'], code: 'invalid_json' },
    { name: 'malformed JSON on register', method: 'POST', path: '/v1/model_registrations/flexible', body: '{oops}', status: 400, mentions: ['JSON'], code: 'invalid_json' },
    { name: 'replica of the wrong type', method: 'POST', path: '/v1/models', body: { model_name: 'good-clf', model_type: 'flexible', replica: 'two' }, status: 400, mentions: ['replica'], param: 'replica' },
    { name: 'n_gpu neither auto, int nor null', method: 'POST', path: '/v1/models', body: { model_name: 'good-clf', model_type: 'flexible', n_gpu: 'all' }, status: 400, mentions: ['n_gpu'], param: 'n_gpu' },
    { name: 'negative request_limits', method: 'POST', path: '/v1/models', body: { model_name: 'good-clf', model_type: 'flexible', request_limits: -1 }, status: 400, mentions: ['request_limits'] },
    { name: 'envs of the wrong type', method: 'POST', path: '/v1/models', body: { model_name: 'good-clf', model_type: 'flexible', envs: ['A=1'] }, status: 400, mentions: ['envs'] },
    { name: 'more GPUs than the machine has', method: 'POST', path: '/v1/models', body: { model_name: 'good-clf', model_type: 'flexible', n_gpu: 64 }, status: 400, mentions: ['n_gpu'] },
    { name: 'gpu_idx not a multiple of replica', method: 'POST', path: '/v1/models', body: { model_name: 'good-clf', model_type: 'flexible', replica: 2, gpu_idx: [0] }, status: 400, mentions: ['multiple of replica'] },
    { name: 'model_path that does not exist', method: 'POST', path: '/v1/models', body: { model_name: 'good-clf', model_type: 'flexible', model_path: '/nonexistent/model' }, status: 400, mentions: ['/nonexistent/model'] },
    { name: 'launch of an unknown model name', method: 'POST', path: '/v1/models', body: { model_name: 'no-such-model', model_type: 'flexible' }, status: 404, mentions: ['no-such-model'] },
    { name: 'launch of an unusable engine', method: 'POST', path: '/v1/models', body: { model_name: 'qwen2.5-instruct', model_engine: 'NoSuchEngine' }, status: 400, mentions: ['NoSuchEngine'] },
    { name: 'uid taken with other parameters', method: 'POST', path: '/v1/models', body: { model_name: 'good-clf', model_type: 'flexible', model_uid: 'good', replica: 3 }, status: 409, mentions: ['good'], code: 'model_uid_conflict' },
    { name: 'model_uri that does not exist', method: 'POST', path: '/v1/model_registrations/flexible', body: flex({ model_name: 'ghost', model_uri: '/nowhere/model.joblib', launcher: 'sklearn' }), status: 400, mentions: ['/nowhere/model.joblib'] },
    { name: 'relative model_uri', method: 'POST', path: '/v1/model_registrations/flexible', body: flex({ model_name: 'rel', model_uri: 'models/x.joblib', launcher: 'sklearn' }), status: 400, mentions: ['models/x.joblib'] },
    { name: 'duplicate registration name', method: 'POST', path: '/v1/model_registrations/flexible', body: flex({ model_name: 'good-clf', model_uri: goodModel, launcher: 'sklearn' }), status: 409, mentions: ['good-clf'] },
    { name: 'registration clashing with a built-in', method: 'POST', path: '/v1/model_registrations/embedding', body: flex({ model_name: 'bge-small-en-v1.5', dimensions: 4, max_tokens: 8, language: ['en'], model_specs: [{ model_format: 'pytorch', model_uri: work, quantization: 'none' }] }), status: 409, mentions: ['bge-small-en-v1.5'] },
    { name: 'registration name with a slash', method: 'POST', path: '/v1/model_registrations/flexible', body: flex({ model_name: 'bad/name', model_uri: goodModel, launcher: 'sklearn' }), status: 400, mentions: ['bad/name'] },
    { name: 'launcher_args that are not JSON', method: 'POST', path: '/v1/model_registrations/flexible', body: flex({ model_name: 'badargs', model_uri: goodModel, launcher: 'sklearn', launcher_args: '{nope' }), status: 400, mentions: ['launcher args'] },
    { name: 'register without a model field', method: 'POST', path: '/v1/model_registrations/flexible', body: { persist: true }, status: 400, mentions: ['model'] },
    { name: 'unregister a built-in', method: 'DELETE', path: '/v1/model_registrations/LLM/qwen2.5-instruct', status: 400, mentions: ['qwen2.5-instruct'] },
    { name: 'unregister an unknown name', method: 'DELETE', path: '/v1/model_registrations/flexible/never-there', status: 404, mentions: ['never-there'] },
    { name: 'get an unknown registration', method: 'GET', path: '/v1/model_registrations/LLM/never-there', status: 404, mentions: ['never-there'] },
    { name: 'infer args that are not a list', method: 'POST', path: '/v1/flexible/infers', body: { model: 'good', args: 'rows' }, status: 400, mentions: ['args'] },
    { name: 'infer input of the wrong shape', method: 'POST', path: '/v1/flexible/infers', body: { model: 'good', args: [[[1, 2]]] }, status: 400, mentions: ['feature'] },
    { name: 'infer with an unknown sklearn method', method: 'POST', path: '/v1/flexible/infers', body: { model: 'good', args: [[[1, 2, 3]]], method: 'explode' }, status: 400, mentions: ['explode'] },
    { name: 'unknown route', method: 'GET', path: '/v1/nowhere', status: 404, mentions: ['/v1/nowhere'], code: 'route_not_found' },
    // The simulator's options are checked before a runtime starts (the last test counts runtimes).
    { name: 'simulator step_ms not a number', method: 'POST', path: '/v1/models', body: { model_name: 'simulator', model_engine: 'simulator', step_ms: 'fast' }, status: 400, mentions: ['step_ms'], code: 'invalid_field', param: 'step_ms' },
    { name: 'simulator max_batch of 0', method: 'POST', path: '/v1/models', body: { model_name: 'simulator', model_engine: 'simulator', max_batch: 0 }, status: 400, mentions: ['max_batch'], code: 'invalid_field', param: 'max_batch' },
    { name: 'simulator max_batch not whole', method: 'POST', path: '/v1/models', body: { model_name: 'simulator', model_engine: 'simulator', max_batch: '2.5' }, status: 400, mentions: ['max_batch', 'int'], code: 'invalid_field', param: 'max_batch' },
    { name: 'simulator ttft_ms past its range', method: 'POST', path: '/v1/models', body: { model_name: 'simulator', model_engine: 'simulator', ttft_ms: 1e9 }, status: 400, mentions: ['ttft_ms', '600000'], code: 'invalid_field', param: 'ttft_ms' },
  ];

  it('answers each with the right status, the error shape and a message naming the problem', async () => {
    const all = cases();
    expect(all.length).toBeGreaterThanOrEqual(25);
    for (const c of all) {
      const res = await request(server.url, c.method, c.path, c.body);
      expect(res.status, `${c.name}: ${res.text}`).toBe(c.status);
      expect(res.body.detail, c.name).toBe(res.body.error.message);
      expect(typeof res.body.error.code, c.name).toBe('string');
      expect(res.headers.get('x-request-id'), c.name).toBeTruthy();
      for (const word of c.mentions) expect(res.body.detail, c.name).toContain(word);
      if (c.code) expect(res.body.error.code, c.name).toBe(c.code);
      if (c.param) expect(res.body.error.param, c.name).toBe(c.param);
    }
  });

  it('answers a path that climbs out of the web UI folder, sent as it is, as no route (the file server said 400 "Forbidden")', async () => {
    const { hostname, port } = new URL(server.url);
    const socket = connect(Number(port), hostname);
    let raw = '';
    socket.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    socket.write(`GET /assets/../v1/models HTTP/1.1\r\nHost: ${hostname}\r\nConnection: close\r\n\r\n`);
    await new Promise((resolve) => socket.once('close', resolve));
    expect(raw.split('\r\n')[0]).toBe('HTTP/1.1 404 Not Found');
    expect(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)).error).toMatchObject({ code: 'route_not_found', message: 'Route GET /assets/../v1/models not found' });
    // A multipart body on a JSON route was there: "no body" misled.
    const form = new FormData();
    form.append('model_name', 'x');
    const multipart = await fetch(`${server.url}/v1/models`, { method: 'POST', body: form });
    expect(((await multipart.json()) as { error: { message: string } }).error.message).toBe('This route does not read multipart/form-data bodies; it takes a JSON object');
  });

  it('reads bodies compressed with gzip, deflate or br, and refuses corrupt, unknown and bomb-sized ones', async () => {
    const send = async (body: Buffer | string, encoding: string) => {
      const res = await fetch(`${server.url}/v1/flexible/infers`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': encoding }, body });
      const text = await res.text();
      return { status: res.status, text, body: JSON.parse(text) };
    };
    const json = JSON.stringify({ model: 'good', args: [[[1, 2, 3]]] });
    const plain = await request(server.url, 'POST', '/v1/flexible/infers', json);
    expect(plain.status, plain.text).toBe(200);
    for (const [encoding, compress] of [['gzip', gzipSync], ['x-gzip', gzipSync], ['deflate', deflateSync], ['br', brotliCompressSync], ['identity', (b: Buffer) => b]] as const) {
      const res = await send(compress(Buffer.from(json)), encoding);
      expect(res.status, `${encoding}: ${res.text}`).toBe(200);
      expect(res.body).toEqual(plain.body);
    }
    const corrupt = await send('this is not gzip', 'gzip');
    expect(corrupt.status).toBe(400);
    expect(corrupt.body.error).toMatchObject({ code: 'invalid_body_encoding' });
    expect(corrupt.body.error.message).toContain('gzip');
    const unknown = await send(json, 'zstd');
    expect(unknown.status).toBe(415);
    expect(unknown.body.error).toMatchObject({ code: 'unsupported_content_encoding' });
    expect(unknown.body.error.message).toContain('zstd');
    // 70 KB on the wire, 70 MiB once inflated: the limit counts what it inflates to.
    const bomb = gzipSync(Buffer.from(`[${' '.repeat(70 * 2 ** 20)}]`));
    expect(bomb.length).toBeLessThan(2 ** 20);
    const refused = await send(bomb, 'gzip');
    expect(refused.status).toBe(413);
    expect(refused.body.error).toMatchObject({ code: 'payload_too_large' });
    expect(refused.body.error.message).toContain('64 MiB');
  });

  it('outlives clients that hang up on a compressed body: after its 413, and part way through it', async () => {
    const url = new URL(server.url);
    // 320 MiB of spaces as 40 gzip members (one stream to a reader): a 413 long before
    // its end, so most of it is still on the wire when the server answers.
    const bomb = Buffer.concat(Array(40).fill(gzipSync(Buffer.alloc(8 * 2 ** 20, 0x20))));
    // Writes the head and `bytes` of the body on a raw connection, then hangs up
    // (after the answer's first bytes, if one comes within 2 s).
    const hangUp = (bytes: number) =>
      new Promise<string>((resolve) => {
        const socket = connect(Number(url.port), url.hostname, () => {
          socket.write(`POST /v1/flexible/infers HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: ${bomb.length}\r\n\r\n`);
          socket.write(bomb.subarray(0, bytes));
        });
        let answer = '';
        const done = () => {
          socket.destroy();
          resolve(answer);
        };
        const timer = setTimeout(done, 2_000);
        socket.on('data', (chunk: Buffer) => {
          answer += chunk.toString();
          clearTimeout(timer);
          done();
        });
        // A server may close a connection whose body it will not read: a reset here is fine.
        socket.on('error', done);
      });
    expect(await hangUp(bomb.length)).toMatch(/^HTTP\/1\.1 413/);
    expect(await hangUp(Math.floor(bomb.length / 10))).toBe(''); // 32 MiB in: nothing to answer yet
    // The late "unexpected end of file" of both bodies once ended the process.
    await new Promise((r) => setTimeout(r, 500));
    expect(server.process.exitCode).toBeNull();
    expect((await request(server.url, 'GET', '/status')).status).toBe(200);
    expect((await request(server.url, 'POST', '/v1/flexible/infers', JSON.stringify({ model: 'good', args: [[[1, 2, 3]]] }))).status).toBe(200);
  });

  it("reads a JSON body sent as text/plain or as curl -d's form type, as Xinference does, but not from a browser page", async () => {
    const json = JSON.stringify({ model: 'good', args: [[[1, 2, 3]]] });
    const plain = await request(server.url, 'POST', '/v1/flexible/infers', json);
    expect(plain.status, plain.text).toBe(200);
    for (const type of ['text/plain;charset=UTF-8', 'application/x-www-form-urlencoded']) {
      const res = await request(server.url, 'POST', '/v1/flexible/infers', json, { 'content-type': type });
      expect([res.status, res.body], type).toEqual([200, plain.body]);
    }
    // A page of another origin sends these without a preflight, past any CORS list: refused.
    for (const type of ['text/plain', 'application/x-www-form-urlencoded']) {
      const res = await request(server.url, 'POST', '/v1/flexible/infers', json, { 'content-type': type, origin: 'https://elsewhere.example' });
      expect([res.status, res.body.error?.code], type).toEqual([415, 'unsupported_media_type']);
    }
    // A form that is not JSON is read only by POST /token (OAuth2's password flow).
    const form = await request(server.url, 'POST', '/v1/flexible/infers', 'model=good&args=1', { 'content-type': 'application/x-www-form-urlencoded' });
    expect([form.status, form.body.error?.code], form.text).toEqual([415, 'unsupported_media_type']);
    const broken = await request(server.url, 'POST', '/v1/flexible/infers', '{"model": "good", "args": [', { 'content-type': 'text/plain' });
    expect([broken.status, broken.body.error?.code]).toEqual([400, 'invalid_json']);
    const xml = await request(server.url, 'POST', '/v1/flexible/infers', '<model>good</model>', { 'content-type': 'application/xml' });
    expect([xml.status, xml.body.error?.code]).toEqual([415, 'unsupported_media_type']);
  });

  it('stops a model whose uid of 100 characters is longer than that as a URL', async () => {
    // Six bytes of percent-escapes per character: past fastify's default 100 for a path parameter.
    const api = client(server.url);
    const uid = 'ü'.repeat(100);
    expect((await api.post('/v1/models', { model_name: 'good-clf', model_type: 'flexible', model_uid: uid })).status).toBe(200);
    const at = `/v1/models/${encodeURIComponent(uid)}`;
    expect((await api.get(at)).status).toBe(200);
    expect((await api.delete(at)).status).toBe(200);
    expect((await api.get(at)).status).toBe(404);
  });

  it('rolls back a launch of a corrupt model file completely', async () => {
    const api = client(server.url);
    const before = await runtimePids(server.home);
    const res = await api.post('/v1/models', { model_name: 'corrupt-clf', model_type: 'flexible', model_uid: 'broken' });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error.code).toBe('model_load_invalid');
    expect(res.body.detail).toContain('corrupt-clf');
    expect(await runtimePids(server.home)).toEqual(before);
    const instance = (await api.get('/v1/models/instances?model_uid=broken')).body;
    expect(instance[0]?.status).toBe('ERROR');
    // The uid is free again: a good model can take it.
    expect((await api.post('/v1/models', { model_name: 'good-clf', model_type: 'flexible', model_uid: 'broken' })).status).toBe(200);
    expect((await api.delete('/v1/models/broken')).status).toBe(200);
  });

  it('still serves, with no stray process or half-written file', async () => {
    const api = client(server.url);
    expect((await api.get('/status')).status).toBe(200);
    expect((await api.post('/v1/flexible/infers', { model: 'good', args: [[[0, 0, 0]]] })).status).toBe(200);
    expect(await runtimePids(server.home)).toHaveLength(1);
    const files = await listFiles(path.join(server.home, 'model'));
    expect(files.map((f) => path.basename(f)).sort()).toEqual(['corrupt-clf.json', 'good-clf.json']);
  });
});

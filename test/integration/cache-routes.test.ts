import { cp, mkdir, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { runCli } from './harness/cli.js';
import { client } from './harness/http.js';
import { makeHome, removeHome, repoRoot, startServer, venvPython, type TestServer } from './harness/server.js';
import { tinyModel } from './harness/tiny-models.js';

const VERSION = 'huggingface:BAAI/bge-small-en-v1.5';

/**
 * The weights cache routes over a real cache folder: a tiny embedder is put where
 * huggingface_hub keeps `BAAI/bge-small-en-v1.5` (its cache layout, offline), so the
 * built-in model launches from it through the real download code, and the routes
 * list, show and delete what is on disk.
 */
describe('cache routes (real server, real cache folder)', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  let work: string;
  let repoDir: string;

  beforeAll(async () => {
    work = await makeHome('hangar-cache-work-');
    const home = await makeHome('hangar-cache-');
    const embedder = tinyModel<{ path: string }>('embedder');
    // Where the runtime's snapshot_download(cache_dir=<home>/cache/huggingface) keeps it.
    repoDir = path.join(home, 'cache', 'huggingface', 'models--BAAI--bge-small-en-v1.5');
    const revision = '0123456789abcdef0123456789abcdef01234567';
    await mkdir(path.join(repoDir, 'refs'), { recursive: true });
    await writeFile(path.join(repoDir, 'refs', 'main'), revision);
    await cp(embedder.path, path.join(repoDir, 'snapshots', revision), { recursive: true });
    server = await startServer({ home });
    api = client(server.url);
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    await removeHome(server.home);
    await removeHome(work);
  });

  it('lists what is on disk with its catalog name, size and hub', async () => {
    const res = await api.get('/v1/cache/models');
    expect(res.status).toBe(200);
    expect(res.body.list).toEqual([
      expect.objectContaining({ model_name: 'bge-small-en-v1.5', model_type: 'embedding', model_version: VERSION, model_id: 'BAAI/bge-small-en-v1.5', model_hub: 'huggingface', path: repoDir, in_use_by: [] }),
    ]);
    expect(res.body.list[0].actual_size).toBeGreaterThan(10_000);
    expect((await api.get('/v1/cache/models?model_name=bge-small-en-v1.5')).body.list).toHaveLength(1);
    expect((await api.get('/v1/cache/models?model_name=other')).body.list).toEqual([]);
  });

  it('shows the same through the CLI (`hangar cached`) and the Python client (list_cached_models)', async () => {
    const table = await runCli(['cached', '-e', server.url]);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout.split('\n')[0]).toMatch(/^Name\s+Type\s+Version\s+Size/);
    expect(table.stdout).toContain(VERSION);
    const py = execFileSync(venvPython, ['-c', 'import json, sys; from hangar_client import Client; c = Client(sys.argv[1]); print(json.dumps([c.list_cached_models(), c.list_deletable_models(sys.argv[2])["model_version"]]))', server.url, VERSION], {
      env: { ...process.env, PYTHONPATH: path.join(repoRoot, 'python-runtime') },
      encoding: 'utf8',
    });
    const [list, version] = JSON.parse(py);
    expect(list.map((r: { model_name: string }) => r.model_name)).toEqual(['bge-small-en-v1.5']);
    expect(version).toBe(VERSION);
  });

  it("lists an entry's files, and names a missing or unknown model_version", async () => {
    const files = await api.get(`/v1/cache/models/files?model_version=${encodeURIComponent(VERSION)}`);
    expect(files.status).toBe(200);
    expect(files.body.model_version).toBe(VERSION);
    expect(files.body.paths.some((p: string) => p.endsWith('config.json'))).toBe(true);
    expect(files.body.paths.every((p: string) => p.startsWith(repoDir))).toBe(true);
    const missing = await api.get('/v1/cache/models/files');
    expect(missing.status).toBe(400);
    expect(missing.body.error.param).toBe('model_version');
    expect(missing.body.error.message).toMatch(/^model_version is required/);
    // Too long is too long, not "required".
    const long = await api.get(`/v1/cache/models/files?model_version=${'x'.repeat(3000)}`);
    expect([long.status, long.body.error.param]).toEqual([400, 'model_version']);
    expect(long.body.error.message).not.toContain('is required');
    expect(long.body.error.message).toMatch(/512/);
    const unknown = await api.get('/v1/cache/models/files?model_version=huggingface:nobody/nothing');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('cache_entry_not_found');
  });

  it('refuses to delete weights a running model uses (409), and deletes them once it is gone', async () => {
    // Launched by a version of GET /v1/models/{type}/{name}/versions (POST /v1/models/instance).
    const versions = await api.get('/v1/models/embedding/bge-small-en-v1.5/versions');
    expect(versions.body[0]).toMatchObject({ cache_status: true });
    const launch = await api.post('/v1/models/instance', { model_type: 'embedding', model_version: versions.body[0].model_version, model_uid: 'bge' });
    expect(launch.status, launch.text).toBe(200);
    expect(launch.body).toEqual({ model_uid: 'bge' });
    const badVersion = await api.post('/v1/models/instance', { model_type: 'LLM', model_version: 'qwen2.5-instruct--big' });
    expect(badVersion.status).toBe(400);
    expect(badVersion.body.error.param).toBe('model_version');
    expect((await api.post('/v1/embeddings', { model: 'bge', input: 'from the cache' })).status).toBe(200);
    expect((await api.get('/v1/cache/models')).body.list[0].in_use_by).toEqual(['bge']);

    const refused = await api.delete(`/v1/cache/models?model_version=${encodeURIComponent(VERSION)}`);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'cache_in_use', param: 'model_version' });
    expect(refused.body.error.message).toContain('bge');
    const cliRefused = await runCli(['remove-cache', '-e', server.url, '--model-version', VERSION, '-y']);
    expect(cliRefused.code).toBe(1);
    expect(cliRefused.stderr).toContain('in use by running model(s) bge');
    expect(existsSync(repoDir)).toBe(true);

    expect((await api.delete('/v1/models/bge')).status).toBe(200);
    // A launch that failed (listed as ERROR until removed) holds no weights: the
    // disk-full error's own advice, deleting the cache, must not answer 409.
    const failed = await api.post('/v1/models', { model_name: 'bge-small-en-v1.5', model_type: 'embedding', model_uid: 'broken', batching: 'yes' });
    expect([failed.status, failed.body.error?.code]).toEqual([400, 'model_load_invalid']);
    expect((await api.get('/v1/models/instances')).body.map((i: { model_uid: string; status: string }) => [i.model_uid, i.status])).toContainEqual(['broken', 'ERROR']);
    expect((await api.get('/v1/cache/models')).body.list[0].in_use_by).toEqual([]);
    const removed = execFileSync(venvPython, ['-c', 'import sys; from hangar_client import Client; print(Client(sys.argv[1]).confirm_and_remove_model(sys.argv[2]))', server.url, VERSION], {
      env: { ...process.env, PYTHONPATH: path.join(repoRoot, 'python-runtime') },
      encoding: 'utf8',
    });
    expect(removed.trim()).toBe('True');
    expect(existsSync(repoDir)).toBe(false);
    expect((await api.get('/v1/cache/models')).body.list).toEqual([]);
    expect((await api.delete(`/v1/cache/models?model_version=${encodeURIComponent(VERSION)}`)).status).toBe(404);
  }, 120_000);
});

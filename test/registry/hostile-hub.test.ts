import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HangarError } from '../../src/errors/hangar-error.js';
import { buildHubRegistration } from '../../src/registry/hub/hub-registration.js';
import { HubClient } from '../../src/registry/hub/hub-client.js';
import { parseHubId } from '../../src/registry/hub/hub-id.js';
import { searchHub, type HubSearchQuery } from '../../src/api/hub/hub-search.js';
import { u32, u64 } from '../fixtures/gguf-bytes.js';

const SHA = 'a'.repeat(40);

/** What each repo of the hostile hub answers: its info (sha, id, files) and its files' bodies. */
interface Repo { info: Record<string, unknown>; files: Record<string, (res: import('node:http').ServerResponse) => void> }
const repos: Record<string, Repo> = {
  'evil/sha': { info: { id: 'evil/sha', sha: '../../../../tmp/escaped', siblings: [{ rfilename: 'm-Q8_0.gguf', size: 10 }] }, files: {} },
  'evil/other-id': { info: { id: '../../etc', sha: SHA, siblings: [{ rfilename: 'config.json' }, { rfilename: 'model.safetensors', size: 10 }] }, files: { 'config.json': (res) => res.end(JSON.stringify({ model_type: 'llama', max_position_embeddings: 64 })) } },
  'evil/huge-config': { info: { id: 'evil/huge-config', sha: SHA, siblings: [{ rfilename: 'config.json' }, { rfilename: 'model.safetensors', size: 10 }] }, files: { 'config.json': (res) => {
    // No content-length: 20 MiB sent in chunks, as a hub that streams it would.
    const chunk = Buffer.alloc(1024 * 1024, 0x20);
    let sent = 0;
    const more = () => { while (sent < 20 && res.write(chunk)) sent++; if (sent >= 20) res.end(); else res.once('drain', more); };
    res.on('error', () => undefined);
    more();
  } } },
  'evil/bad-config': { info: { id: 'evil/bad-config', sha: SHA, siblings: [{ rfilename: 'config.json' }, { rfilename: 'model.safetensors', size: 10 }] }, files: { 'config.json': (res) => res.end('<html>not json</html>') } },
  'evil/liar-GGUF': { info: { id: 'evil/liar-GGUF', sha: SHA, siblings: [{ rfilename: 'liar-Q8_0.gguf', size: 10_000_000_000_000 }] }, files: { 'liar-Q8_0.gguf': (res) => {
    // A header whose first key claims to be 2^40 bytes long, then endless bytes.
    res.write(Buffer.concat([Buffer.from('GGUF'), u32(3), u64(0n), u64(1n), u64(2n ** 40n)]));
    const chunk = Buffer.alloc(1024 * 1024, 0x41);
    const more = () => { while (!res.destroyed && res.write(chunk)); if (!res.destroyed) res.once('drain', more); };
    res.on('error', () => undefined);
    more();
  } } },
};

describe('a hostile hub', () => {
  let hub: Server;
  let endpoint: string;
  const ranges: string[] = [];
  const infoAsked: string[] = [];

  beforeAll(async () => {
    hub = createServer((req: IncomingMessage, res) => {
      const url = decodeURIComponent(req.url ?? '');
      if (url.startsWith('/api/models?')) {
        // A search that ignores `limit`, with ids that are no repository and counts that are no counts.
        const found = [{ id: '../../etc' }, { id: 'evil/other-id', downloads: 1e308, likes: -1 }, { id: 'evil' }, ...Array.from({ length: 500 }, (_, i) => ({ id: `evil/r${i}`, downloads: i }))];
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(found));
      }
      if (url.startsWith('/api/models/') && url.includes('/revision/')) infoAsked.push(url);
      const info = /^\/api\/models\/(.+?)\/revision\//.exec(url);
      if (info) {
        const repo = repos[info[1]!];
        if (!repo) return void res.writeHead(404).end();
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(repo.info));
      }
      const file = /^\/(.+?\/.+?)\/resolve\/[^/]+\/(.+)$/.exec(url);
      const serve = file ? repos[file[1]!]?.files[file[2]!] : undefined;
      if (!serve) return void res.writeHead(404).end();
      ranges.push(String(req.headers.range));
      res.writeHead(200);
      serve(res);
    });
    await new Promise<void>((resolve) => hub.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(hub.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => { hub.closeAllConnections(); hub.close(() => resolve()); }));

  const build = (name: string) =>
    buildHubRegistration({ client: new HubClient({ env: { HF_ENDPOINT: endpoint }, timeoutMs: 10_000 }), id: parseHubId(name)!, modelType: 'LLM', builtinFamily: () => undefined });
  const refusal = async (name: string): Promise<HangarError> => {
    const err = await build(name).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(HangarError);
    return err as HangarError;
  };

  it('refuses a commit id that is not one: it would name a folder outside the cache', async () => {
    const err = await refusal('hf.co/evil/sha:Q8_0');
    expect(err.code).toBe('hub_error');
    expect(err.message).toContain('not 40 hex digits');
  });

  it('keeps the id asked for when the hub answers with another', async () => {
    const record = await build('evil/other-id');
    expect((record.model_specs as Array<{ model_id: string }>).map((s) => s.model_id)).toEqual(['evil/other-id']);
  });

  it('stops reading a config file past its limit', async () => {
    const before = process.memoryUsage().rss;
    const err = await refusal('evil/huge-config');
    expect(err.code).toBe('hub_error');
    expect(err.message).toMatch(/over the 16 MiB/);
    expect(process.memoryUsage().rss - before).toBeLessThan(200 * 1024 * 1024);
  });

  it('says a config that is not JSON is not JSON, not that there is none', async () => {
    const err = await refusal('evil/bad-config');
    expect(err.code).toBe('hub_model_unusable');
    expect(err.message).toContain('config.json does not read as a JSON object');
  });

  it('refuses a GGUF header that claims 2^40 bytes at once, asking for at most 64 MiB and holding none of it', async () => {
    const before = process.memoryUsage().rss;
    const err = await refusal('hf.co/evil/liar-GGUF:Q8_0');
    expect(err.code).toBe('hub_model_unusable');
    expect(err.message).toMatch(/claims 1099511627776 more bytes/);
    expect(ranges.at(-1)).toBe(`bytes=0-${64 * 1024 * 1024 - 1}`);
    expect(process.memoryUsage().rss - before).toBeLessThan(200 * 1024 * 1024);
  });

  it('searches without asking for ids that are no repository, and no more results than the limit', async () => {
    infoAsked.length = 0;
    const found = await searchHub({ search: 'x', limit: 2 } as HubSearchQuery, { env: { HF_ENDPOINT: endpoint }, timeoutMs: 10_000, cacheDir: '/nonexistent', devices: [] });
    expect(found.data.map((r) => [r.id, r.downloads, r.likes])).toEqual([['evil/other-id', null, null], ['evil/r0', 0, null]]);
    expect(infoAsked.map((u) => u.split('/revision/')[0])).toEqual(['/api/models/evil/other-id', '/api/models/evil/r0']);
  });
});

import { createServer } from 'node:http';
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, writeFile, mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ggufFile } from '../../src/llama-runtime/engine/model-file.js';

const split = {
  model_file_name_template: 'm-{quantization}.gguf',
  model_file_name_split_template: 'm-{quantization}-{part}.gguf',
  quantization_parts: { q4_k_m: ['00001-of-00002', '00002-of-00002'] },
};

/** HF_ENDPOINT at a loopback hub, offline mode off; answers what puts both back. */
function pointHubAt(endpoint: string): () => void {
  const saved = { HF_ENDPOINT: process.env.HF_ENDPOINT, HF_HUB_OFFLINE: process.env.HF_HUB_OFFLINE };
  process.env.HF_ENDPOINT = endpoint;
  delete process.env.HF_HUB_OFFLINE;
  return () => {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  };
}

describe('which GGUF file a launch loads', () => {
  let dir: string;
  const progress: Array<[number, string]> = [];
  const onProgress = (value: number, _stage: string, message: string) => void progress.push([value, message]);

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'hangar-gguf-file-'));
    progress.length = 0;
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('picks from a folder by template, split parts, the only file, or the quantization in a name', async () => {
    for (const name of ['m-q8_0.gguf', 'm-q4_k_m-00001-of-00002.gguf', 'm-q4_k_m-00002-of-00002.gguf', 'other-Q5_K_M.gguf', 'notes.txt']) await writeFile(path.join(dir, name), 'x');
    expect(await ggufFile({ model_uri: dir, quantization: 'q8_0', ...split }, onProgress)).toBe(path.join(dir, 'm-q8_0.gguf'));
    expect(await ggufFile({ model_uri: dir, quantization: 'q4_k_m', ...split }, onProgress)).toBe(path.join(dir, 'm-q4_k_m-00001-of-00002.gguf'));
    expect(await ggufFile({ model_uri: `file://${dir}`, quantization: 'q5_k_m' }, onProgress)).toBe(path.join(dir, 'other-Q5_K_M.gguf'));
    // The first part of a split model stands for it, whatever part 2 is called.
    expect(await ggufFile({ model_uri: dir, quantization: 'q4_k_m' }, onProgress)).toBe(path.join(dir, 'm-q4_k_m-00001-of-00002.gguf'));
    await expect(ggufFile({ model_uri: dir, quantization: 'none' }, onProgress)).rejects.toThrow(/holds 4 GGUF files .* does not pick one/);
    await expect(ggufFile({ model_uri: path.join(dir, 'nope') }, onProgress)).rejects.toThrow(/does not exist/);
    // Names that would leave the cache folder are refused before anything is fetched.
    for (const bad of [{ model_id: 'org/repo', model_file_name_template: '../../escape.gguf' }, { model_id: '../../x', model_file_name_template: 'a.gguf' }, { model_id: 'org/repo', model_file_name_template: '/etc/a.gguf' }]) {
      await expect(ggufFile({ ...bad, quantization: 'q8_0', cache_dir: dir }, onProgress)).rejects.toThrow(/is not a path inside the model's repository/);
    }
    const single = path.join(dir, 'single');
    await mkdir(single);
    await writeFile(path.join(single, 'only.gguf'), 'x');
    expect(await ggufFile({ model_uri: single, quantization: 'q2_k' }, onProgress)).toBe(path.join(single, 'only.gguf'));
    expect(await ggufFile({ model_uri: path.join(single, 'only.gguf') }, onProgress)).toBe(path.join(single, 'only.gguf'));
  });

  it('downloads the parts of a quantization kept in a folder of its own (unsloth, bartowski)', async () => {
    const hub = createServer((req, res) => {
      const body = Buffer.alloc(1024, 3);
      res.writeHead(req.url!.includes('/resolve/main/BF16/') ? 200 : 404, { 'content-length': body.length }).end(body);
    });
    await new Promise<void>((resolve) => hub.listen(0, '127.0.0.1', resolve));
    const restoreEnv = pointHubAt(`http://127.0.0.1:${(hub.address() as { port: number }).port}`);
    try {
      const spec = {
        model_id: 'unsloth/M-GGUF',
        quantization: 'BF16',
        cache_dir: dir,
        model_file_name_template: 'BF16/M-{quantization}.gguf',
        model_file_name_split_template: '{quantization}/M-{quantization}-{part}.gguf',
        quantization_parts: { BF16: ['00001-of-00002', '00002-of-00002'] },
      };
      const first = await ggufFile(spec, onProgress);
      const folder = path.join(dir, 'huggingface', 'models--unsloth--M-GGUF', 'snapshots', 'main', 'BF16');
      expect(first).toBe(path.join(folder, 'M-BF16-00001-of-00002.gguf'));
      expect((await readdir(folder)).sort()).toEqual(['M-BF16-00001-of-00002.gguf', 'M-BF16-00002-of-00002.gguf']);
    } finally {
      hub.closeAllConnections();
      hub.close();
      restoreEnv();
    }
  });

  it('downloads only the split parts of the quantization asked for, with progress, then uses the cache', async () => {
    const asked: string[] = [];
    const hub = createServer((req, res) => {
      asked.push(req.url!);
      const body = Buffer.alloc(64 * 1024, req.url!.length);
      res.writeHead(req.url!.includes('/resolve/main/m-q4_k_m-') ? 200 : 404, { 'content-length': body.length }).end(body);
    });
    await new Promise<void>((resolve) => hub.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(hub.address() as { port: number }).port}`;
    const restoreEnv = pointHubAt(endpoint);
    try {
      const spec = { model_id: 'org/repo-GGUF', model_hub: 'huggingface', quantization: 'q4_k_m', cache_dir: dir, ...split };
      const first = await ggufFile(spec, onProgress);
      const folder = path.join(dir, 'huggingface', 'models--org--repo-GGUF', 'snapshots', 'main');
      expect(first).toBe(path.join(folder, 'm-q4_k_m-00001-of-00002.gguf'));
      expect((await readdir(folder)).sort()).toEqual(['m-q4_k_m-00001-of-00002.gguf', 'm-q4_k_m-00002-of-00002.gguf']);
      expect((await readFile(path.join(folder, 'm-q4_k_m-00002-of-00002.gguf'))).length).toBe(64 * 1024);
      expect(asked).toEqual(['/org/repo-GGUF/resolve/main/m-q4_k_m-00001-of-00002.gguf', '/org/repo-GGUF/resolve/main/m-q4_k_m-00002-of-00002.gguf']);
      expect(progress.at(-1)).toEqual([0.8, 'Downloaded org/repo-GGUF (2 parts of m-q4_k_m-00001-of-00002.gguf)']);
      // In the cache now: the hub is not asked again, even when it is gone.
      hub.close();
      expect(await ggufFile(spec, onProgress)).toBe(first);
      expect(asked).toHaveLength(2);
      // A file the hub does not have, and a hub that is not there, say what to do.
      await expect(ggufFile({ ...spec, quantization: 'q8_0' }, onProgress)).rejects.toThrow(/could not be reached .*not in the cache .*model_path/);
      process.env.HF_HUB_OFFLINE = '1';
      await expect(ggufFile({ ...spec, quantization: 'q8_0' }, onProgress)).rejects.toThrow(/offline mode is on .*model_path/);
      // A spec that names no file for its quantization.
      await expect(ggufFile({ model_id: 'org/x', quantization: 'q8_0', cache_dir: dir }, onProgress)).rejects.toThrow(/names no GGUF file/);
    } finally {
      hub.close();
      restoreEnv();
    }
  });

  it('gives the hub a few seconds to answer, never the download as a whole', async () => {
    // Headers at once, then the body in pieces over longer than the answer's limit.
    const slow = createServer((req, res) => {
      if (req.url!.includes('silent')) return; // never answers
      res.writeHead(200, { 'content-length': 4 * 1024 });
      let sent = 0;
      const timer = setInterval(() => {
        res.write(Buffer.alloc(1024, 1));
        if (++sent === 4) {
          clearInterval(timer);
          res.end();
        }
      }, 150);
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    const restoreEnv = pointHubAt(`http://127.0.0.1:${(slow.address() as { port: number }).port}`);
    try {
      const spec = { model_id: 'org/slow', quantization: 'q8_0', cache_dir: dir, model_file_name_template: 'slow-{quantization}.gguf' };
      const file = await ggufFile(spec, onProgress, 300);
      expect((await readFile(file)).length).toBe(4 * 1024);
      const started = performance.now();
      await expect(ggufFile({ ...spec, model_file_name_template: 'silent-{quantization}.gguf' }, onProgress, 300)).rejects.toThrow(/could not be reached \(waited at most 0.3s/);
      expect(performance.now() - started).toBeLessThan(3000);
    } finally {
      slow.closeAllConnections();
      slow.close();
      restoreEnv();
    }
  });

  it('resumes an interrupted or stalled download with a Range request, checks it against the hub\'s sha256, and never keeps a bad file', async () => {
    const body = Buffer.from(Array.from({ length: 256 * 1024 }, (_, i) => (i * 7) % 251));
    const sha256 = createHash('sha256').update(body).digest('hex');
    let claimed = sha256;
    const ranges: Array<string | undefined> = [];
    let cuts = 1;
    let stalls = 0;
    const hub = createServer((req, res) => {
      ranges.push(req.headers.range);
      const start = Number(/^bytes=(\d+)-$/.exec(req.headers.range ?? '')?.[1] ?? 0);
      const part = body.subarray(start);
      res.writeHead(start > 0 ? 206 : 200, {
        'content-length': part.length,
        'x-linked-etag': `"${claimed}"`,
        'x-linked-size': body.length,
        ...(start > 0 ? { 'content-range': `bytes ${start}-${body.length - 1}/${body.length}` } : {}),
      });
      if (cuts > 0) {
        // A hub (or proxy) that goes away a third of the way in.
        cuts--;
        res.write(part.subarray(0, 80 * 1024), () => res.destroy());
        return;
      }
      if (stalls > 0) {
        // One that stops sending and keeps the connection open.
        stalls--;
        res.write(part.subarray(0, 16 * 1024));
        return;
      }
      res.end(part);
    });
    await new Promise<void>((resolve) => hub.listen(0, '127.0.0.1', resolve));
    const restoreEnv = pointHubAt(`http://127.0.0.1:${(hub.address() as { port: number }).port}`);
    const resumedAt = (range: string | undefined): number => Number(/^bytes=(\d+)-$/.exec(range ?? '')?.[1] ?? Number.NaN);
    try {
      const spec = { model_id: 'org/resume', quantization: 'q8_0', cache_dir: dir, model_file_name_template: 'r-{quantization}.gguf' };
      const folder = path.join(dir, 'huggingface', 'models--org--resume', 'snapshots', 'main');
      // Cut once: asked again from where it stopped, in the same launch.
      const file = await ggufFile(spec, onProgress);
      expect(ranges[0]).toBeUndefined();
      expect(resumedAt(ranges[1])).toBeGreaterThan(0);
      expect(ranges).toHaveLength(2);
      expect((await readFile(file)).equals(body)).toBe(true);
      expect(await readdir(folder)).toEqual(['r-q8_0.gguf']);
      // Stalled (no bytes for twice the hub timeout, here 0.6 s): the same, not a launch held for the load's 15-minute limit.
      ranges.length = 0;
      stalls = 1;
      const stalled = await ggufFile({ ...spec, model_file_name_template: 's-{quantization}.gguf' }, onProgress, 300);
      expect((await readFile(stalled)).equals(body)).toBe(true);
      expect(resumedAt(ranges[1])).toBe(16 * 1024);
      // Cut on every try: after three more, "try again later" (503), and what arrived is
      // kept beside the file, never as the file, for the next launch to resume.
      ranges.length = 0;
      cuts = 4;
      await expect(ggufFile({ ...spec, model_file_name_template: 'c-{quantization}.gguf' }, onProgress)).rejects.toThrow(
        expect.objectContaining({ name: 'SourceUnreachable', message: expect.stringMatching(/failed after .*; asked 3 more times\. Launch again later to resume it/) }),
      );
      expect(ranges).toHaveLength(4);
      expect((await readdir(folder)).sort()).toEqual(['c-q8_0.gguf.incomplete', 'r-q8_0.gguf', 's-q8_0.gguf']);
      const resumed = await ggufFile({ ...spec, model_file_name_template: 'c-{quantization}.gguf' }, onProgress);
      expect((await readFile(resumed)).equals(body)).toBe(true);
      expect(resumedAt(ranges.at(-1))).toBeGreaterThan(0);

      // A hub whose hash the bytes do not match: the copy is removed, not loaded.
      claimed = 'f'.repeat(64);
      await expect(ggufFile({ ...spec, model_file_name_template: 'bad-{quantization}.gguf' }, onProgress)).rejects.toThrow(/sha256 .* is not the hub's f{64}; the bad copy was removed/);
      expect((await readdir(folder)).sort()).toEqual(['c-q8_0.gguf', 'r-q8_0.gguf', 's-q8_0.gguf']);
    } finally {
      hub.closeAllConnections();
      hub.close();
      restoreEnv();
    }
  });

  it('waits out a busy hub (429 with Retry-After, 503) before failing, and stops a hub that sends more than it declared', async () => {
    const body = Buffer.alloc(64 * 1024, 3);
    const sha256 = createHash('sha256').update(body).digest('hex');
    const answers: number[] = [];
    let busy = 2;
    const hub = createServer((req, res) => {
      if (req.url!.includes('always-busy')) {
        answers.push(503);
        res.writeHead(503, { 'retry-after': '0' }).end('busy');
        return;
      }
      if (req.url!.includes('overflow')) {
        // Declares 64 KiB, sends 1 MiB.
        res.writeHead(200, { 'x-linked-size': body.length, 'x-linked-etag': `"${sha256}"` });
        res.end(Buffer.alloc(1024 * 1024, 3));
        return;
      }
      if (busy-- > 0) {
        answers.push(429);
        res.writeHead(429, { 'retry-after': '0' }).end('slow down');
        return;
      }
      answers.push(200);
      res.writeHead(200, { 'content-length': body.length, 'x-linked-etag': `"${sha256}"`, 'x-linked-size': body.length }).end(body);
    });
    await new Promise<void>((resolve) => hub.listen(0, '127.0.0.1', resolve));
    const restoreEnv = pointHubAt(`http://127.0.0.1:${(hub.address() as { port: number }).port}`);
    try {
      const spec = { model_id: 'org/busy', quantization: 'q8_0', cache_dir: dir, model_file_name_template: 'b-{quantization}.gguf' };
      expect((await readFile(await ggufFile(spec, onProgress))).equals(body)).toBe(true);
      expect(answers).toEqual([429, 429, 200]);
      answers.length = 0;
      // Still busy after the retries: "try later" (a 503 for the launch), not a request to fix.
      const busyError = await ggufFile({ ...spec, model_file_name_template: 'always-busy-{quantization}.gguf' }, onProgress).catch((err: Error) => err);
      expect(busyError).toMatchObject({ name: 'SourceUnreachable', message: expect.stringContaining('answered HTTP 503; try again later') });
      expect(answers).toEqual([503, 503, 503, 503]);
      await expect(ggufFile({ ...spec, model_file_name_template: 'overflow-{quantization}.gguf' }, onProgress)).rejects.toThrow(/sent more than the 0.1 MiB it declared; the copy was removed/);
      const folder = path.join(dir, 'huggingface', 'models--org--busy', 'snapshots', 'main');
      expect((await readdir(folder)).sort()).toEqual(['b-q8_0.gguf']);
    } finally {
      hub.closeAllConnections();
      hub.close();
      restoreEnv();
    }
  });

  it('sends the hub token to the hub alone: not to a CDN it redirects to, nor on the CDN\'s own later hops', async () => {
    const body = Buffer.alloc(4096, 7);
    const seen: Array<[string, string | undefined]> = [];
    const cdn = createServer((req, res) => {
      seen.push([req.url!, req.headers.authorization]);
      if (req.url === '/hop1') return void res.writeHead(302, { location: '/hop2' }).end();
      res.writeHead(200, { 'content-length': body.length }).end(body);
    });
    await new Promise<void>((resolve) => cdn.listen(0, '127.0.0.1', resolve));
    // Another origin: `localhost`, not the hub's `127.0.0.1`.
    const cdnUrl = `http://localhost:${(cdn.address() as { port: number }).port}`;
    const hub = createServer((req, res) => {
      seen.push([`hub${req.url}`, req.headers.authorization]);
      res.writeHead(302, { location: `${cdnUrl}/hop1`, 'x-linked-size': body.length }).end();
    });
    await new Promise<void>((resolve) => hub.listen(0, '127.0.0.1', resolve));
    const restoreEnv = pointHubAt(`http://127.0.0.1:${(hub.address() as { port: number }).port}`);
    const token = process.env.HF_TOKEN;
    process.env.HF_TOKEN = 'hf_SECRET_FOR_THE_HUB';
    try {
      const spec = { model_id: 'org/cdn', quantization: 'q8_0', cache_dir: dir, model_file_name_template: 'c-{quantization}.gguf' };
      expect((await readFile(await ggufFile(spec, onProgress))).equals(body)).toBe(true);
      expect(seen).toEqual([['hub/org/cdn/resolve/main/c-q8_0.gguf', 'Bearer hf_SECRET_FOR_THE_HUB'], ['/hop1', undefined], ['/hop2', undefined]]);
    } finally {
      if (token === undefined) delete process.env.HF_TOKEN;
      else process.env.HF_TOKEN = token;
      for (const server of [hub, cdn]) {
        server.closeAllConnections();
        server.close();
      }
      restoreEnv();
    }
  });

  it('lets one of two downloads of the same file fetch it while the other waits, then both use it', async () => {
    const body = Buffer.alloc(96 * 1024, 7);
    const asked: string[] = [];
    const hub = createServer((req, res) => {
      asked.push(req.url!);
      res.writeHead(200, { 'content-length': body.length });
      // Slowly, so the two downloads overlap.
      res.write(body.subarray(0, 32 * 1024));
      setTimeout(() => res.end(body.subarray(32 * 1024)), 300);
    });
    await new Promise<void>((resolve) => hub.listen(0, '127.0.0.1', resolve));
    const restoreEnv = pointHubAt(`http://127.0.0.1:${(hub.address() as { port: number }).port}`);
    try {
      const spec = { model_id: 'org/shared', quantization: 'q8_0', cache_dir: dir, model_file_name_template: 's-{quantization}.gguf' };
      const [a, b] = await Promise.all([ggufFile(spec, onProgress), ggufFile(spec, onProgress)]);
      expect(a).toBe(b);
      expect((await readFile(a)).equals(body)).toBe(true);
      expect(asked).toHaveLength(1);
      expect(await readdir(path.dirname(a))).toEqual(['s-q8_0.gguf']);
    } finally {
      hub.closeAllConnections();
      hub.close();
      restoreEnv();
    }
  });
});

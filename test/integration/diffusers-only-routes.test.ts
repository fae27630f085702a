import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeHome, startServer, type TestServer } from './harness/server.js';

// A PNG's signature and header chunk: what the upload check reads.
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489', 'hex');

/** Routes only diffusers serves (GPU hosts): validated, then refused by name here, where diffusers is absent. */
describe('image-to-video, first/last-frame video and inpainting without diffusers (real server)', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startServer();
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    await removeHome(server.home);
  });

  const post = async (url: string, parts: Record<string, string | Buffer>) => {
    const form = new FormData();
    for (const [name, value] of Object.entries(parts)) {
      if (typeof value === 'string') form.append(name, value);
      else form.append(name, new Blob([new Uint8Array(value)], { type: 'image/png' }), `${name}.png`);
    }
    const res = await fetch(server.url + url, { method: 'POST', body: form });
    return { status: res.status, body: (await res.json()) as { error: { code: string; param: string | null; message: string } } };
  };

  it.each([
    ['/v1/video/generations/image', { image: PNG }],
    ['/v1/video/generations/flf', { first_frame: PNG, last_frame: PNG }],
    ['/v1/images/inpainting', { image: PNG, mask_image: PNG }],
  ])('%s validates its form, then names the missing engine', async (url, files) => {
    const json = await fetch(server.url + url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(json.status).toBe(415);
    const noPrompt = await post(url, { model: 'm', ...files });
    expect(noPrompt.status).toBe(400);
    expect(noPrompt.body.error.param).toBe('prompt');
    const [firstFile] = Object.keys(files);
    const missingFile = await post(url, { model: 'm', prompt: 'a cat' });
    expect(missingFile.status).toBe(400);
    expect(missingFile.body.error.message).toContain(firstFile);
    const notAnImage = await post(url, { model: 'm', prompt: 'a cat', ...Object.fromEntries(Object.keys(files).map((k) => [k, Buffer.from('not an image')])) });
    expect(notAnImage.status).toBe(400);
    const valid = await post(url, { model: 'm', prompt: 'a cat', ...files });
    expect(valid.status).toBe(400);
    expect(valid.body.error.code).toBe('route_engine_missing');
    expect(valid.body.error.message).toContain('diffusers');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from './harness/http.js';
import { makeHome, removeHome, startServer, type TestServer } from './harness/server.js';
import { tinyMediaModels, pythonHas } from './harness/tiny-media-models.js';

// The diffusers engine with a tiny random-weight Stable Diffusion pipeline built here.
// diffusers does not install on the machines this project is developed on (no wheel
// in their package indexes), so this runs only where the runtime's Python imports it.
const available = pythonHas('diffusers');
if (!available) {
  console.warn('media-diffusers.test.ts: skipped: the Python package diffusers is not installed in python-runtime/.venv (install it to run the text-to-image tests)');
}

const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47]);

describe.skipIf(!available)('diffusers text-to-image', () => {
  let server: TestServer;
  let work: string;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    work = await makeHome('hangar-diffusers-');
    const tiny = tinyMediaModels(['diffusion']);
    server = await startServer();
    api = client(server.url);
    const model = { model_name: 'tiny-sd', model_family: 'stable_diffusion', model_ability: ['text2image', 'image2image'], model_uri: tiny.diffusion!.path };
    expect((await api.post('/v1/model_registrations/image', { model, persist: false })).status).toBe(200);
    const launch = await api.post('/v1/models', { model_name: 'tiny-sd', model_type: 'image', model_uid: 'sd' });
    expect(launch.status, launch.text).toBe(200);
  }, 240_000);

  afterAll(async () => {
    await server?.stop();
    if (server) await removeHome(server.home);
    if (work) await removeHome(work);
  });

  it('answers b64_json images and expiring links served by the service', async () => {
    const kwargs = { num_inference_steps: 2 };
    const b64 = await api.post('/v1/images/generations', { model: 'sd', prompt: 'a red square', n: 2, size: '64x64', response_format: 'b64_json', kwargs });
    expect(b64.status, b64.text).toBe(200);
    expect(b64.body.data).toHaveLength(2);
    for (const item of b64.body.data) expect(Buffer.from(item.b64_json, 'base64').subarray(0, 4)).toEqual(PNG_MAGIC);
    const linked = await api.post('/v1/images/generations', { model: 'sd', prompt: 'a red square', size: '64x64', kwargs });
    const url = new URL(linked.body.data[0].url);
    expect(url.pathname).toMatch(/^\/v1\/media\/[A-Za-z0-9_-]+\.png$/);
    const image = await fetch(url);
    expect(image.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await image.arrayBuffer()).subarray(0, 4)).toEqual(PNG_MAGIC);
    const form = new FormData();
    form.append('model', 'sd');
    form.append('prompt', 'a blue square');
    form.append('response_format', 'b64_json');
    form.append('kwargs', JSON.stringify(kwargs));
    form.append('image', new Blob([Buffer.from(b64.body.data[0].b64_json, 'base64')]), 'source.png');
    const variation = await fetch(`${server.url}/v1/images/variations`, { method: 'POST', body: form });
    expect(variation.status, await variation.clone().text()).toBe(200);
    expect(((await variation.json()) as { data: unknown[] }).data).toHaveLength(1);
    form.set('image', new Blob([Buffer.from(b64.body.data[1].b64_json, 'base64')]), 'source.png');
    const edit = await fetch(`${server.url}/v1/images/edits`, { method: 'POST', body: form });
    expect(edit.status, await edit.clone().text()).toBe(200);
  });
});

import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp } from './test-app.js';

/** Xinference's catalog helpers over the real built-in catalog. */
describe('catalog helper routes', () => {
  let app: FastifyInstance;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ app, close } = await buildTestApp(null));
  });
  afterAll(async () => close());

  const get = async (url: string) => {
    const res = await app.inject({ method: 'GET', url });
    return { status: res.statusCode, body: res.json() };
  };

  it('lists LLM families by ability, before /v1/models/{uid} could take the path', async () => {
    const { status, body } = await get('/v1/models/families');
    expect(status).toBe(200);
    expect(body.chat).toContain('qwen2.5-instruct');
    expect(body.chat).not.toContain('simulator-generate-only');
    for (const ability of ['chat', 'generate', 'tools', 'vision']) expect(Array.isArray(body[ability]), ability).toBe(true);
    expect(body.tools.every((n: string) => body.chat.includes(n) || body.generate.includes(n))).toBe(true);
  });

  it('gives the chat format of each family that has one', async () => {
    const { body } = await get('/v1/models/prompts');
    expect(body['qwen2.5-instruct']).toMatchObject({ chat_template: expect.stringContaining('im_start'), stop_token_ids: expect.any(Array), stop: expect.any(Array) });
  });

  it('names the families vLLM serves by their formats', async () => {
    const { body } = await get('/v1/models/vllm-supported');
    expect(body.chat).toContain('qwen2.5-instruct');
  });

  it("lists a model's versions with cache status, and 404s an unknown one", async () => {
    const { status, body } = await get('/v1/models/LLM/qwen2.5-instruct/versions');
    expect(status).toBe(200);
    expect(body.length).toBeGreaterThan(1);
    expect(body[0]).toMatchObject({ model_version: expect.stringMatching(/^qwen2\.5-instruct--/), model_format: expect.any(String), cache_status: false });
    expect((await get('/v1/models/LLM/no-such-model/versions')).status).toBe(404);
    expect((await get('/v1/models/nonsense/x/versions')).status).toBe(400);
  });

  it('says plainly that the catalog cannot be updated from a hub', async () => {
    const res = await app.inject({ method: 'POST', url: '/v1/models/update_type', payload: { model_type: 'LLM' } });
    expect(res.statusCode).toBe(503);
    expect(res.json().error).toMatchObject({ code: 'catalog_update_unavailable' });
    expect(res.json().error.message).toContain('no remote catalog is reachable');
    expect((await app.inject({ method: 'POST', url: '/v1/models/update_type', payload: { model_type: 'bogus' } })).statusCode).toBe(400);
  });
});

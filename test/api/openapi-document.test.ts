import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuthConfig } from '../../src/auth/auth-config.js';
import { upstreamAuthConfig } from '../fixtures/auth-users.js';
import { buildTestApp } from './test-app.js';

type Operation = { requestBody?: { content: Record<string, { schema: { properties?: Record<string, { format?: string }>; required?: string[] } }> }; responses: Record<string, unknown>; security?: unknown[] };
type Document = { openapi: string; paths: Record<string, Record<string, Operation>>; components: { securitySchemes: Record<string, { type: string; scheme?: string }> } };

const MULTIPART: Record<string, string[]> = {
  '/v1/audio/transcriptions': ['file'],
  '/v1/audio/translations': ['file'],
  '/v1/images/ocr': ['image'],
  '/v1/images/variations': ['image'],
  '/v1/images/edits': ['image'],
  '/v1/images/inpainting': ['image', 'mask_image'],
  '/v1/video/generations/image': ['image'],
  '/v1/video/generations/flf': ['first_frame', 'last_frame'],
};

/** /openapi.json as client generators read it, checked by a real OpenAPI 3.0 validator, with auth on and off. */
describe('the OpenAPI document', () => {
  const docs: Record<'on' | 'off', Document> = {} as never;
  const closes: Array<() => Promise<void>> = [];
  beforeAll(async () => {
    for (const [mode, auth] of [['on', upstreamAuthConfig() as AuthConfig], ['off', null]] as const) {
      const built = await buildTestApp(auth);
      closes.push(built.close);
      const res = await built.app.inject({ method: 'GET', url: '/openapi.json', headers: auth ? { authorization: 'Bearer sk-3sjLbdwqAhhAF' } : {} });
      expect(res.statusCode).toBe(200);
      docs[mode] = JSON.parse(res.body);
    }
  });
  afterAll(async () => {
    for (const close of closes) await close();
  });

  it('passes an OpenAPI validator, with auth on and off', async () => {
    for (const mode of ['on', 'off'] as const) {
      const validator = new Validator();
      const result = await validator.validate(docs[mode] as unknown as Record<string, unknown>);
      expect(result.errors, mode).toBeUndefined();
      expect(result.valid).toBe(true);
      expect(validator.version).toBe('3.0');
    }
    // The validator does catch what generators choke on: an answer without a description.
    const broken = structuredClone(docs.on);
    delete (broken.paths['/v1/models']!.get!.responses['200'] as { description?: string }).description;
    expect((await new Validator().validate(broken as unknown as Record<string, unknown>)).valid).toBe(false);
  });

  it('declares the multipart bodies of the upload routes, files as binary', () => {
    for (const [path, files] of Object.entries(MULTIPART)) {
      const body = docs.on.paths[path]?.post?.requestBody?.content['multipart/form-data']?.schema;
      expect(body, path).toBeDefined();
      expect(body!.required, path).toEqual(expect.arrayContaining(['model', ...files]));
      for (const file of files) expect(body!.properties![file]!.format, `${path} ${file}`).toBe('binary');
    }
  });

  it('declares the bearer scheme on every guarded operation when auth is on, and none when it is off', () => {
    expect(docs.on.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    const guarded = (doc: Document) => Object.entries(doc.paths).flatMap(([p, ops]) => Object.entries(ops).filter(([, op]) => op.security).map(([m]) => `${m} ${p}`));
    expect(guarded(docs.on)).toEqual(expect.arrayContaining(['post /v1/chat/completions', 'post /v1/responses', 'get /metrics', 'delete /v1/models/{model_uid}']));
    expect(docs.on.paths['/status']!.get!.security).toBeUndefined();
    expect(docs.on.paths['/v1/messages']!.post!.security).toEqual([{ bearerAuth: [] }, { anthropicApiKey: [] }]);
    expect(guarded(docs.off)).toEqual([]);
  });

  it('lists /metrics, answers of the JSON routes and the error body on every operation', () => {
    expect(docs.on.paths['/metrics']!.get!.responses['200']).toMatchObject({ content: { 'text/plain': expect.anything() } });
    const ref = (path: string, method: string) => JSON.stringify(docs.on.paths[path]![method]!.responses['200']);
    expect(ref('/v1/chat/completions', 'post')).toContain('#/components/schemas/ChatCompletion');
    expect(ref('/v1/chat/completions', 'post')).toContain('text/event-stream');
    expect(ref('/v1/responses', 'post')).toContain('#/components/schemas/Response');
    expect(ref('/v1/models', 'get')).toContain('#/components/schemas/ModelList');
    for (const [p, ops] of Object.entries(docs.on.paths)) {
      for (const [m, op] of Object.entries(ops)) expect(JSON.stringify(op.responses['4XX']), `${m} ${p}`).toContain('#/components/schemas/Error');
    }
  });
});

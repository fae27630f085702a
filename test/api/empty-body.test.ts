import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp } from './test-app.js';

/**
 * An empty body sent with the JSON content type, as OpenAI's SDKs send it on routes
 * that take none (`client.post("/models/x/cancel")`, `responses.cancel`): no body.
 */
describe('an empty JSON body', () => {
  let app: FastifyInstance;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ app, close } = await buildTestApp(null));
  });
  afterAll(async () => {
    await close();
  });
  const post = (url: string) => app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: '' });

  it('reaches routes that take no body as no body, and leaves an unknown path a 404', async () => {
    expect((await post('/v1/models/nope/cancel')).json().error.code).toBe('model_not_found');
    expect((await post('/v1/models/nope/requests/x/abort')).json()).toEqual({ msg: 'NO_OP' });
    const unknown = await post('/v1/responses/resp_x/frobnicate');
    expect([unknown.statusCode, unknown.json().error.code]).toEqual([404, 'route_not_found']);
    // responses.cancel is a route: an id nobody stored is that response's 404.
    expect((await post('/v1/responses/resp_x/cancel')).json().error.code).toBe('response_not_found');
  });

  it('is UTF-8 or refused: bytes that are not were read as U+FFFD and changed a prompt unsaid', async () => {
    const bytes = Buffer.concat([Buffer.from('{"model": "m", "messages": [{"role": "user", "content": "a'), Buffer.from([0xed, 0xa0, 0x80, 0xff]), Buffer.from('"}]}')]);
    const res = await app.inject({ method: 'POST', url: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, payload: bytes });
    expect([res.statusCode, res.json().error.code]).toEqual([400, 'invalid_json']);
    expect(res.json().error.message).toContain('not valid UTF-8');
    // Malformed JSON is said to be so, its text not echoed (a password in it went back in the answer).
    const malformed = await app.inject({ method: 'POST', url: '/token', headers: { 'content-type': 'application/json' }, payload: '{"username":"admin","password":PW-SECRET-1}' });
    expect([malformed.statusCode, malformed.json().error.code]).toEqual([400, 'invalid_json']);
    expect(malformed.body).not.toContain('SECRET');
    // A byte-order mark is no error.
    const bom = await app.inject({ method: 'POST', url: '/v1/models/nope/requests/x/abort', headers: { 'content-type': 'application/json' }, payload: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{}')]) });
    expect(bom.json()).toEqual({ msg: 'NO_OP' });
  });

  it('of any other content type is no body too (aiohttp sends octet-stream with none); with a body such a type is 415', async () => {
    const octet = (payload: string) => app.inject({ method: 'POST', url: '/v1/models/nope/cancel', headers: { 'content-type': 'application/octet-stream' }, payload });
    // Before, a 415 before the route ran: Xinference's AsyncClient.cancel_launch_model always failed.
    expect((await octet('')).json().error.code).toBe('model_not_found');
    const withBody = await octet('bytes');
    expect([withBody.statusCode, withBody.json().error.code]).toEqual([415, 'unsupported_media_type']);
    expect(withBody.json().detail).toContain('application/octet-stream');
  });

  it('is refused where a body is needed, as a missing body, in the error shape', async () => {
    for (const url of ['/v1/chat/completions', '/v1/models', '/v1/embeddings']) {
      const res = await post(url);
      expect(res.statusCode, url).toBe(400);
      expect(res.json().detail, url).toBe(res.json().error.message);
      expect(res.json().error.code, url).toBe('invalid_field');
      expect(res.json().detail, url).toBe('The request has no body; this route takes a JSON object');
    }
    // A body that is there but broken is still malformed JSON.
    const broken = await app.inject({ method: 'POST', url: '/v1/models', headers: { 'content-type': 'application/json' }, payload: '{"model_name": ' });
    expect(broken.json().error.code).toBe('invalid_json');
  });
});

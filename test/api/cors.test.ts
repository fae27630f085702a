import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import type { AuthConfig } from '../../src/auth/auth-config.js';
import { parseCorsOrigins } from '../../src/config/config.js';
import { upstreamAuthConfig } from '../fixtures/auth-users.js';
import { buildTestApp } from './test-app.js';

const APP = 'http://app.example.test:5173';
const preflight = (app: FastifyInstance, origin: string, url = '/v1/chat/completions') =>
  app.inject({
    method: 'OPTIONS',
    url,
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type,x-stainless-os' },
  });

describe('CORS', () => {
  let close: (() => Promise<void>) | null = null;
  afterEach(async () => {
    await close?.();
    close = null;
  });

  it('answers any origin by default, before the auth guard, and exposes our headers', async () => {
    const built = await buildTestApp(upstreamAuthConfig() as AuthConfig);
    close = built.close;
    const pre = await preflight(built.app, APP);
    expect(pre.statusCode).toBe(204);
    expect(pre.headers['access-control-allow-origin']).toBe('*');
    expect(String(pre.headers['access-control-allow-headers'])).toContain('authorization');
    expect(String(pre.headers['access-control-allow-methods'])).toContain('POST');

    const get = await built.app.inject({ method: 'GET', url: '/v1/models', headers: { origin: APP, authorization: 'Bearer sk-3sjLbdwqAhhAF' } });
    expect(get.statusCode).toBe(200);
    expect(get.headers['access-control-allow-origin']).toBe('*');
    expect(String(get.headers['access-control-expose-headers'])).toContain('x-request-id');
    expect(String(get.headers['access-control-expose-headers'])).toContain('x-ratelimit-remaining-requests');
    // A refusal carries the header too, so the page can read the 401 instead of a network error.
    const denied = await built.app.inject({ method: 'GET', url: '/v1/models', headers: { origin: APP } });
    expect(denied.statusCode).toBe(401);
    expect(denied.headers['access-control-allow-origin']).toBe('*');
  });

  it('guards an OPTIONS request that is no preflight, so the methods of a path cannot be learnt without a credential', async () => {
    const built = await buildTestApp(upstreamAuthConfig() as AuthConfig);
    close = built.close;
    // Before: 405 "this path takes GET, POST, HEAD" to anyone, which mapped the route table.
    // Neither plain, nor with a preflight's header but no Origin (which the plugin does not take).
    for (const [url, headers] of [['/v1/admin/users', {}], ['/v1/admin/keys/1', {}], ['/no/such/path', {}], ['/v1/admin/users', { 'access-control-request-method': 'GET' }]] as const) {
      const plain = await built.app.inject({ method: 'OPTIONS', url, headers });
      expect([plain.statusCode, plain.json().error.code], url).toEqual([401, 'not_authenticated']);
      expect(plain.body, url).not.toContain('this path takes');
    }
    // A preflight is still answered, without a credential.
    expect((await preflight(built.app, APP, '/v1/admin/users')).statusCode).toBe(204);
    // With an admin's credential the answer may say which methods the path takes.
    const admin = await built.app.inject({ method: 'OPTIONS', url: '/v1/admin/users', headers: { authorization: 'Bearer sk-3sjLbdwqAhhAF' } });
    expect(admin.statusCode).toBe(405);
    expect(admin.headers.allow).toContain('GET');
  });

  it('answers only the listed origins with --cors-origins a,b', async () => {
    const built = await buildTestApp(null, { corsOrigins: [APP] });
    close = built.close;
    expect((await preflight(built.app, APP)).headers['access-control-allow-origin']).toBe(APP);
    const other = await preflight(built.app, 'http://evil.example.test');
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('sends no CORS headers with --cors-origins none', async () => {
    const built = await buildTestApp(null, { corsOrigins: null });
    close = built.close;
    const res = await built.app.inject({ method: 'GET', url: '/v1/models', headers: { origin: APP } });
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect((await preflight(built.app, APP)).headers['access-control-allow-origin']).toBeUndefined();
  });

  it('reads --cors-origins values and names a bad one', () => {
    expect(parseCorsOrigins('*')).toBe('*');
    expect(parseCorsOrigins('none')).toBeNull();
    expect(parseCorsOrigins('https://a.example, http://localhost:5173/')).toEqual(['https://a.example', 'http://localhost:5173']);
    expect(() => parseCorsOrigins('https://a.example/app')).toThrow(/did you mean https:\/\/a.example/);
    expect(() => parseCorsOrigins('not an origin')).toThrow(/not an origin/);
  });
});

import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upstreamAuthConfig } from '../fixtures/auth-users.js';
import type { AuthConfig } from '../../src/auth/auth-config.js';
import { buildTestApp } from './test-app.js';

const webDist = path.join(import.meta.dirname, '..', '..', 'web', 'dist');
const ADMIN_KEY = 'sk-3sjLbdwqAhhAF';

/** The hashed script and stylesheet index.html loads. */
function assetsOf(html: string): string[] {
  return [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!);
}

for (const auth of [false, true]) {
  describe(`the web UI's files with auth ${auth ? 'on' : 'off'}`, () => {
    let app: FastifyInstance;
    let close: () => Promise<void>;

    beforeAll(async () => {
      expect(existsSync(path.join(webDist, 'index.html')), 'web/dist is missing: run `npm run setup` to build the web UI').toBe(true);
      ({ app, close } = await buildTestApp(auth ? (upstreamAuthConfig() as AuthConfig) : null));
    });
    afterAll(async () => close());

    it('serves index.html at / without a credential, never cached without revalidation', async () => {
      const res = await app.inject({ url: '/', headers: { 'accept-encoding': 'identity' } });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.headers['content-security-policy']).toContain("default-src 'self'");
      expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.body).toContain('<div id="root">');
      expect(res.body).toBe(readFileSync(path.join(webDist, 'index.html'), 'utf8'));
      const etag = res.headers.etag as string;
      expect(etag).toBeTruthy();
      const again = await app.inject({ url: '/', headers: { 'if-none-match': etag, 'accept-encoding': 'identity' } });
      expect(again.statusCode).toBe(304);
    });

    it('serves index.html compressed when the browser accepts it', async () => {
      const res = await app.inject({ url: '/', headers: { 'accept-encoding': 'gzip, deflate, br' } });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-encoding']).toBe('br');
      expect(brotliDecompressSync(res.rawPayload).toString()).toBe(readFileSync(path.join(webDist, 'index.html'), 'utf8'));
    });

    it('serves the app for its own pages under /ui/, so a reload of a page works', async () => {
      for (const url of ['/ui', '/ui/launch/LLM', '/ui/running/embedding', '/ui/login?next=%2Fui%2Fcluster']) {
        const res = await app.inject({ url, headers: { 'accept-encoding': 'identity' } });
        expect(res.statusCode, url).toBe(200);
        expect(res.body, url).toContain('<div id="root">');
      }
    });

    it('serves each hashed asset compressed (br, gzip) and plain, cacheable for a year as immutable', async () => {
      const index = (await app.inject({ url: '/', headers: { 'accept-encoding': 'identity' } })).body;
      const assets = assetsOf(index);
      expect(assets.some((a) => a.endsWith('.js'))).toBe(true);
      expect(assets.some((a) => a.endsWith('.css'))).toBe(true);
      for (const asset of assets) {
        const onDisk = readFileSync(path.join(webDist, asset));
        const br = await app.inject({ url: asset, headers: { 'accept-encoding': 'br' } });
        expect(br.statusCode, asset).toBe(200);
        expect(br.headers['content-encoding']).toBe('br');
        expect(br.headers['cache-control']).toBe('public, max-age=31536000, immutable');
        expect(String(br.headers.vary)).toMatch(/accept-encoding/i);
        expect(br.headers['content-type']).toMatch(asset.endsWith('.js') ? /javascript/ : /text\/css/);
        expect(brotliDecompressSync(br.rawPayload).equals(onDisk)).toBe(true);
        expect(br.rawPayload.length).toBeLessThan(onDisk.length);

        const gz = await app.inject({ url: asset, headers: { 'accept-encoding': 'gzip' } });
        expect(gz.headers['content-encoding']).toBe('gzip');
        expect(gunzipSync(gz.rawPayload).equals(onDisk)).toBe(true);

        const plain = await app.inject({ url: asset, headers: { 'accept-encoding': 'identity' } });
        expect(plain.headers['content-encoding']).toBeUndefined();
        expect(plain.rawPayload.equals(onDisk)).toBe(true);
      }
    });

    it('answers a missing asset with the JSON 404, not the app', async () => {
      const res = await app.inject({ url: '/assets/no-such-file.js' });
      expect(res.statusCode).toBe(404);
      expect(res.json().error.code).toBe('route_not_found');
      // A path that climbs out of the folder is no route either.
      const escape = await app.inject({ url: '/assets/..%2findex.html' });
      expect([escape.statusCode, escape.json().error.code]).toEqual([404, 'route_not_found']);
      expect(escape.body).not.toContain('<div id="root">');
    });

    it('answers hostile paths under the UI with a 4xx, never a file outside web/dist or a 5xx', async () => {
      const hostile = ['/assets/%', '/assets/%E0%A4%A', '/assets/%00', '/assets/..%2f..%2fpackage.json', '/assets/%2e%2e/%2e%2e/package.json', '/assets/.hidden', '/assets/', `/assets/${'a'.repeat(5000)}.js`, '/ui/%', '/ui/../../package.json', '/assets//etc/passwd'];
      for (const url of hostile) {
        const res = await app.inject({ url, headers: { 'accept-encoding': 'br, gzip' } });
        expect(res.statusCode, url).toBeLessThan(500);
        expect(res.body, url).not.toContain('"name": "hangar"');
        expect(res.body, url).not.toContain('root:');
      }
    });

    it('keeps unknown API paths a JSON 404 (guarded first when auth is on)', async () => {
      const headers = auth ? { authorization: `Bearer ${ADMIN_KEY}` } : {};
      for (const url of ['/v1/no-such-route', '/v1/models/x/no-such', '/uix', '/favicon.ico']) {
        if (auth) {
          const anonymous = await app.inject({ url });
          expect(anonymous.statusCode, url).toBe(401);
        }
        const res = await app.inject({ url, headers });
        expect(res.statusCode, url).toBe(404);
        expect(res.json().error.code, url).toBe('route_not_found');
      }
    });

    it('answers a served path under a method it does not take with 405 and Allow, as FastAPI does', async () => {
      const headers = auth ? { authorization: `Bearer ${ADMIN_KEY}` } : {};
      const cases: Array<[method: 'GET' | 'PUT' | 'DELETE', url: string, allow: string]> = [
        ['GET', '/v1/chat/completions', 'POST'],
        ['PUT', '/v1/models', 'GET, POST, HEAD'],
        ['DELETE', '/v1/embeddings?x=1', 'POST'],
        ['DELETE', '/assets/no-such-file.js', 'GET, HEAD'],
      ];
      for (const [method, url, allow] of cases) {
        if (auth) expect((await app.inject({ method, url })).statusCode, url).toBe(401);
        const res = await app.inject({ method, url, headers });
        expect(res.statusCode, url).toBe(405);
        expect(res.headers.allow, url).toBe(allow);
        expect(res.json().error.code, url).toBe('method_not_allowed');
        expect(res.json().detail, url).toContain(`${method} ${url.split('?')[0]}`);
      }
    });

    if (auth) {
      it('still guards every API route the page calls', async () => {
        for (const url of ['/v1/models', '/v1/model_registrations/LLM', '/v1/cluster/devices']) {
          expect((await app.inject({ url })).statusCode, url).toBe(401);
        }
        expect((await app.inject({ url: '/v1/cluster/auth' })).json()).toEqual({ auth: true });
      });
    }
  });
}

describe('an install whose web UI was not built', () => {
  let app: FastifyInstance;
  let close: () => Promise<void>;
  let empty: string;
  beforeAll(async () => {
    empty = await mkdtemp(path.join(os.tmpdir(), 'hangar-no-web-'));
    ({ app, close } = await buildTestApp(null, { webRoot: empty }));
  });
  afterAll(async () => {
    await close();
    await rm(empty, { recursive: true, force: true });
  });

  it('says so at / and names the command to run, while the API works', async () => {
    const res = await app.inject({ url: '/' });
    expect(res.statusCode).toBe(503);
    expect(res.json().error.code).toBe('web_ui_not_built');
    expect(res.json().detail).toContain('npm run setup');
    expect((await app.inject({ url: '/v1/models' })).statusCode).toBe(200);
  });
});

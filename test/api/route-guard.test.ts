import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuthConfig } from '../../src/auth/auth-config.js';
import { PERMISSIONS } from '../../src/auth/permissions.js';
import { PUBLIC_ROUTES } from '../../src/auth/public-routes.js';
import type { RouteEntry } from '../../src/api/route-table.js';
import { SECRET } from '../fixtures/auth-users.js';
import { buildTestApp, samplePath } from './test-app.js';

const nonAdmin = PERMISSIONS.filter((p) => p !== 'admin');
const keyFor = (i: number) => `sk-${String(i).padStart(13, '0')}`;
// One user per permission holding only it, one holding every permission but admin, an admin.
const users = [
  ...nonAdmin.map((p, i) => ({ username: `only-${p}`, password: 'pw', permissions: [p], api_keys: [keyFor(i)] })),
  { username: 'all-but-admin', password: 'pw', permissions: [...nonAdmin], api_keys: [keyFor(90)] },
  { username: 'admin', password: 'pw', permissions: ['admin'], api_keys: [keyFor(99)] },
];
const authConfig = {
  auth_config: { algorithm: 'HS256', secret_key: SECRET, token_expire_in_minutes: 30, enforce_expiry: false },
  user_config: users,
} as AuthConfig;

const keyOf = (username: string) => users.find((u) => u.username === username)!.api_keys[0]!;
const isPublic = (r: RouteEntry) => PUBLIC_ROUTES.has(`${r.method === 'HEAD' ? 'GET' : r.method} ${r.url}`);

async function call(app: FastifyInstance, route: RouteEntry, authorization?: string) {
  const headers: Record<string, string> = authorization ? { authorization } : {};
  // OPTIONS is public as a CORS preflight only; a plain one is guarded (cors.test.ts).
  if (route.method === 'OPTIONS') Object.assign(headers, { origin: 'http://app.example.test', 'access-control-request-method': 'POST' });
  const hasBody = route.method === 'POST' || route.method === 'PUT' || route.method === 'PATCH';
  return app.inject({ method: route.method as 'GET', url: samplePath(route.url), headers, ...(hasBody ? { payload: {} } : {}) });
}

describe('the auth guard over the live route table', () => {
  let app: FastifyInstance;
  let close: () => Promise<void>;
  let routes: RouteEntry[];

  beforeAll(async () => {
    ({ app, close } = await buildTestApp(authConfig));
    routes = app.routeTable;
  });
  afterAll(async () => close());

  it('has routes to walk, including every public one', () => {
    expect(routes.length).toBeGreaterThan(20);
    for (const pub of PUBLIC_ROUTES) {
      expect(routes.some((r) => `${r.method} ${r.url}` === pub), pub).toBe(true);
    }
  });

  it('answers 401 with WWW-Authenticate: Bearer on every guarded route without a credential', async () => {
    for (const route of routes.filter((r) => !isPublic(r))) {
      const res = await call(app, route);
      expect(res.statusCode, `${route.method} ${route.url}`).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer');
      if (route.method !== 'HEAD') expect(res.json().detail).toBe('Not authenticated');
    }
  });

  it('lets public routes through without a credential', async () => {
    for (const route of routes.filter(isPublic)) {
      const res = await call(app, route);
      expect([401, 403], `${route.method} ${route.url}`).not.toContain(res.statusCode);
    }
  });

  it('answers 403 to a user without the route permission and lets a user with it through', async () => {
    for (const route of routes.filter((r) => !isPublic(r))) {
      const needed = route.permission ?? 'admin';
      const without = needed === 'admin' ? 'all-but-admin' : (nonAdmin.find((p) => p !== needed) && `only-${nonAdmin.find((p) => p !== needed)}`)!;
      const denied = await call(app, route, `Bearer ${keyOf(without)}`);
      expect(denied.statusCode, `${route.method} ${route.url} as ${without}`).toBe(403);
      expect(denied.headers['www-authenticate']).toBe(`Bearer scope="${needed}"`);
      const holder = needed === 'admin' ? 'admin' : `only-${needed}`;
      const allowed = await call(app, route, `Bearer ${keyOf(holder)}`);
      expect([401, 403], `${route.method} ${route.url} as ${holder}: ${allowed.body}`).not.toContain(allowed.statusCode);
      const admin = await call(app, route, `Bearer ${keyOf('admin')}`);
      expect([401, 403], `${route.method} ${route.url} as admin`).not.toContain(admin.statusCode);
    }
  });

  it('guards unknown paths too', async () => {
    expect((await app.inject({ method: 'GET', url: '/v1/secret-probe' })).statusCode).toBe(401);
    expect((await app.inject({ method: 'GET', url: '/v1/secret-probe', headers: { authorization: `Bearer ${keyOf('admin')}` } })).statusCode).toBe(404);
  });

  it('matches the route → permission table in docs/auth.md', () => {
    const doc = readFileSync(path.join(import.meta.dirname, '..', '..', 'docs', 'auth.md'), 'utf8');
    const rows = new Map<string, string>();
    for (const m of doc.matchAll(/^\|\s*(GET|POST|DELETE|PUT|PATCH|OPTIONS)\s*\|\s*`([^`]+)`\s*\|\s*([a-z:]+|public)\s*\|/gm)) rows.set(`${m[1]} ${m[2]}`, m[3]!);
    for (const route of routes.filter((r) => r.method !== 'HEAD' && !r.url.startsWith('/docs'))) {
      const expected = isPublic(route) ? 'public' : (route.permission ?? 'admin');
      expect(rows.get(`${route.method} ${route.url}`), `docs/auth.md row for ${route.method} ${route.url}`).toBe(expected);
    }
  });
});

describe('without --auth-config', () => {
  let app: FastifyInstance;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ app, close } = await buildTestApp(null));
  });
  afterAll(async () => close());

  it('asks no route for credentials, with no header or a junk one', async () => {
    for (const route of app.routeTable) {
      for (const authorization of [undefined, 'Bearer junk', 'Basic dXNlcjpwYXNz', 'sk-72tkvudyGLPMi']) {
        const res = await call(app, route, authorization);
        expect([401, 403], `${route.method} ${route.url} with ${authorization}`).not.toContain(res.statusCode);
      }
    }
  });

  it('says auth is off', async () => {
    expect((await app.inject({ method: 'GET', url: '/v1/cluster/auth' })).json()).toEqual({ auth: false });
  });
});

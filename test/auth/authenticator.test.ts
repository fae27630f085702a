import { SignJWT, UnsecuredJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import type { AuthConfig } from '../../src/auth/auth-config.js';
import { Authenticator } from '../../src/auth/authenticator.js';
import { IdentityStore } from '../../src/auth/identity-store.js';
import { openDatabase } from '../../src/storage/sqlite-database.js';
import { SECRET, upstreamAuthConfig } from '../fixtures/auth-users.js';

const config = (extra: Record<string, unknown> = {}) => upstreamAuthConfig({ enforce_expiry: false, ...extra }) as AuthConfig;
const key = (s: string) => new TextEncoder().encode(s);
// The file's users only: an empty database beside them.
const fileOnly = (c: AuthConfig) => new Authenticator(c, new IdentityStore(openDatabase(':memory:')));

describe('Authenticator', () => {
  const auth = fileOnly(config());

  it('logs in with the right password only', async () => {
    expect(await auth.login('user1', 'pass1')).toMatch(/^ey/);
    expect(await auth.login('user1', 'pass2')).toBeNull();
    expect(await auth.login('nobody', 'pass1')).toBeNull();
  });

  it('turns a login token into its user and scopes', async () => {
    const token = (await auth.login('user3', 'pass3'))!;
    const who = await auth.authenticate(token);
    expect(who?.username).toBe('user3');
    expect([...who!.scopes].sort()).toEqual(['models:list', 'models:read', 'models:start']);
  });

  it('looks up API keys', async () => {
    expect((await auth.authenticate('sk-72tkvudyGLPMi'))?.username).toBe('user2');
    expect((await auth.authenticate('sk-ZOTLIY4gt9w11'))?.username).toBe('user3');
  });

  it('expands 2.12 names', async () => {
    const c = config();
    c.user_config[1]!.permissions = ['models:write', 'models:register'];
    const who = await fileOnly(c).authenticate('sk-72tkvudyGLPMi');
    expect([...who!.scopes]).toEqual(expect.arrayContaining(['models:start', 'models:stop', 'models:register', 'models:unregister']));
  });

  it('refuses forged, broken and stale credentials', async () => {
    const now = Math.floor(Date.now() / 1000);
    const good = (await auth.login('user1', 'pass1'))!;
    const otherSecret = await new SignJWT({ scopes: ['admin'] }).setProtectedHeader({ alg: 'HS256' }).setSubject('user1').setExpirationTime(now + 60).sign(key('another-secret-another-secret-another'));
    const algNone = new UnsecuredJWT({ scopes: ['admin'] }).setSubject('user1').encode();
    const ghost = await new SignJWT({ scopes: ['admin'] }).setProtectedHeader({ alg: 'HS256' }).setSubject('deleted-user').sign(key(SECRET));
    const hs512 = await new SignJWT({ scopes: ['admin'] }).setProtectedHeader({ alg: 'HS512' }).setSubject('user1').sign(key(SECRET));
    for (const bad of [otherSecret, algNone, ghost, hs512, good.slice(0, -5), good.slice(0, 20), 'sk-72tkvudyGLPMj', 'sk-wrongapikey12', 'garbage', '']) {
      expect(await auth.authenticate(bad), bad).toBeNull();
    }
  });

  it('ignores expiry unless enforce_expiry is set', async () => {
    const expired = await new SignJWT({ scopes: ['models:list'] }).setProtectedHeader({ alg: 'HS256' }).setSubject('user2').setExpirationTime(Math.floor(Date.now() / 1000) - 60).sign(key(SECRET));
    expect((await auth.authenticate(expired))?.username).toBe('user2');
    expect(await fileOnly(config({ enforce_expiry: true })).authenticate(expired)).toBeNull();
  });
});

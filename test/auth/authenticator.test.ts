import { SignJWT, UnsecuredJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import type { AuthConfig } from '../../src/auth/auth-config.js';
import { Authenticator } from '../../src/auth/authenticator.js';
import { IdentityStore } from '../../src/auth/identity-store.js';
import { hashPassword } from '../../src/auth/password-hash.js';
import { sameText } from '../../src/auth/secret-digest.js';
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

describe('Authenticator with database keys', () => {
  const noLimits = { rpm: null, tpm: null, max_parallel: null };
  const setUp = () => {
    const identities = new IdentityStore(openDatabase(':memory:'));
    const bob = identities.createUser({ username: 'bob', passwordHash: 'scrypt$1$1$1$AA==$AA==', permissions: ['models:read', 'models:list'] }, new Date());
    const make = (extra: Partial<{ scopes: string[] | null; expires_at: string | null }> = {}) =>
      identities.createKey({ owner: { id: bob.id, username: 'bob' }, name: 'k', description: null, expires_at: null, model_permissions: [], scopes: null, limits: noLimits, ...extra }, new Date()).key;
    return { identities, bob, make };
  };

  it("gives a key its owner's permissions, cut down to its own scopes", async () => {
    const { identities, make } = setUp();
    const auth = new Authenticator(null, identities);
    expect([...(await auth.authenticate(make()))!.scopes].sort()).toEqual(['models:list', 'models:read']);
    expect([...(await auth.authenticate(make({ scopes: ['models:read', 'admin'] })))!.scopes]).toEqual(['models:read']);
  });

  it('refuses a key once it expires, by the injected clock, or once its owner is disabled', async () => {
    const { identities, bob, make } = setUp();
    let now = Date.parse('2026-01-01T00:00:00Z');
    const auth = new Authenticator(null, identities, () => now);
    const key = make({ expires_at: '2026-01-01T01:00:00.000Z' });
    expect(await auth.authenticate(key)).not.toBeNull();
    now += 3_600_000;
    expect(await auth.authenticate(key)).toBeNull();
    const other = make();
    identities.updateUser(bob.id, { enabled: false });
    expect(await auth.authenticate(other)).toBeNull();
  });

  it("ends a database user's login tokens when the user is deleted (a new user of the name gets none of them) or the password changes", async () => {
    const identities = new IdentityStore(openDatabase(':memory:'));
    const auth = new Authenticator(null, identities);
    const carol = identities.createUser({ username: 'carol', passwordHash: await hashPassword('first password'), permissions: ['models:list'] }, new Date());
    const token = (await auth.login('carol', 'first password'))!;
    expect((await auth.authenticate(token))?.userId).toBe(carol.id);
    // Its claims carry the id and a stamp, never the password's hash.
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
    expect(claims).toMatchObject({ sub: 'carol', uid: carol.id, pwd: expect.any(String) });
    expect(token).not.toContain(identities.userByName('carol')!.passwordHash.split('$').at(-1)!);

    identities.updateUser(carol.id, { passwordHash: await hashPassword('second password') });
    expect(await auth.authenticate(token)).toBeNull();
    const second = (await auth.login('carol', 'second password'))!;
    expect((await auth.authenticate(second))?.username).toBe('carol');

    // Made again with the very same password hash: only the id tells the two apart.
    const sameHash = identities.userByName('carol')!.passwordHash;
    identities.deleteUser(carol.id);
    expect(await auth.authenticate(second)).toBeNull();
    const again = identities.createUser({ username: 'carol', passwordHash: sameHash, permissions: ['admin'] }, new Date());
    expect(again.id).not.toBe(carol.id);
    expect(await auth.authenticate(second)).toBeNull();
    expect(await auth.authenticate(token)).toBeNull();
    expect((await auth.authenticate((await auth.login('carol', 'second password'))!))?.scopes.has('admin')).toBe(true);
  });

  it("never lends a file user's permissions to a database user's key of the same name", async () => {
    const { identities, make } = setUp();
    const key = make();
    const c = config();
    c.user_config.push({ username: 'bob', password: 'pw', permissions: ['admin'], api_keys: [] });
    const who = await new Authenticator(c, identities).authenticate(key);
    expect(who?.scopes.has('admin')).toBe(false);
    expect(who?.userId).not.toBeNull();
  });
});

describe('Authenticator on a keep-alive connection', () => {
  const noLimits = { rpm: null, tpm: null, max_parallel: null };
  const setup = () => {
    let now = Date.parse('2026-11-25T10:00:00Z');
    const store = new IdentityStore(openDatabase(':memory:'));
    const auth = new Authenticator(config(), store, () => now);
    const newKey = (name: string, expires_at: string | null = null) =>
      store.createKey({ owner: { id: null, username: 'user1' }, name, description: null, expires_at, model_permissions: [], scopes: null, limits: noLimits }, new Date(now));
    return { auth, store, newKey, advance: (ms: number) => (now += ms) };
  };

  it('recognises the connection\'s last key, and never lets it answer for another', () => {
    const { auth, newKey } = setup();
    const a = newKey('a').key;
    const b = newKey('b').key;
    const socket = {};
    expect((auth.authenticate(a, socket) as any)?.key?.name).toBe('a');
    expect((auth.authenticate(a, socket) as any)?.key?.name).toBe('a');
    // Another key on the same connection (a pooling proxy): looked up, not the remembered one.
    expect((auth.authenticate(b, socket) as any)?.key?.name).toBe('b');
    const wrong = a.slice(0, -1) + (a.endsWith('x') ? 'y' : 'x');
    expect(auth.authenticate(wrong, socket)).toBeNull();
    expect((auth.authenticate(a, socket) as any)?.key?.name).toBe('a');
    expect(auth.authenticate('sk-72tkvudyGLPMi', socket)).toMatchObject({ username: 'user2', key: null });
    expect(auth.authenticate('sk-72tkvudyGLPMj', socket)).toBeNull();
  });

  it('sees a revocation and an expiry at the next request of the same connection', () => {
    const { auth, store, newKey, advance } = setup();
    const socket = {};
    const revoked = newKey('revoked');
    expect(auth.authenticate(revoked.key, socket)).not.toBeNull();
    store.updateKey(revoked.record.id, { enabled: false });
    expect(auth.authenticate(revoked.key, socket)).toBeNull();
    const deleted = newKey('deleted');
    expect(auth.authenticate(deleted.key, socket)).not.toBeNull();
    store.deleteKey(deleted.record.id);
    expect(auth.authenticate(deleted.key, socket)).toBeNull();
    const expiring = newKey('expiring', '2026-11-25T10:00:05Z');
    expect(auth.authenticate(expiring.key, socket)).not.toBeNull();
    advance(5_000);
    expect(auth.authenticate(expiring.key, socket)).toBeNull();
  });
});

describe('sameText', () => {
  it('is true for equal strings only', () => {
    expect(sameText('sk-abc', 'sk-abc')).toBe(true);
    expect(sameText('', '')).toBe(true);
    for (const other of ['sk-abd', 'tk-abc', 'sk-ab', 'sk-abcd', '']) expect(sameText('sk-abc', other), other).toBe(false);
  });
});

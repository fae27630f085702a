import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { IdentityStore } from '../../src/auth/identity-store.js';
import { hashPassword, verifyPassword } from '../../src/auth/password-hash.js';
import { openDatabase } from '../../src/storage/sqlite-database.js';

const noLimits = { rpm: null, tpm: null, max_parallel: null };
const spec = (owner: { id: number | null; username: string }, name = 'k') => ({ owner, name, description: null, expires_at: null, model_permissions: [], scopes: null, limits: noLimits });

describe('IdentityStore', () => {
  let dir: string;
  let file: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'hangar-ids-'));
    file = path.join(dir, 'hangar.db');
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('finds a key by its clear value only, and keeps only a digest on disk', () => {
    const db = openDatabase(file);
    const store = new IdentityStore(db);
    const { record, key } = store.createKey(spec({ id: null, username: 'file-admin' }), new Date());
    expect(key).toMatch(/^sk-[A-Za-z0-9]{48}$/);
    expect(record.key_prefix).toBe(key.slice(0, 12));
    expect(store.findKey(key)?.id).toBe(record.id);
    expect(store.findKey(key.slice(0, -1) + (key.endsWith('a') ? 'b' : 'a'))).toBeNull();
    expect(store.findKey('sk-3sjLbdwqAhhAF')).toBeNull();
    db.close();
    for (const name of readdirSync(dir)) expect(readFileSync(path.join(dir, name)).includes(key), name).toBe(false);
  });

  it('keeps users and keys across a reopen; deleting a user deletes their keys', async () => {
    let db = openDatabase(file);
    let store = new IdentityStore(db);
    const alice = store.createUser({ username: 'alice', passwordHash: await hashPassword('correct horse'), permissions: ['models:read'] }, new Date());
    const { key } = store.createKey(spec({ id: alice.id, username: 'alice' }), new Date());
    store.touch(store.findKey(key)!.id, Date.parse('2026-01-01T00:00:00Z'));
    store.flushTouches();
    db.close();

    db = openDatabase(file);
    store = new IdentityStore(db);
    const again = store.userByName('alice')!;
    expect(await verifyPassword('correct horse', again.passwordHash)).toBe(true);
    expect(await verifyPassword('wrong horse', again.passwordHash)).toBe(false);
    expect(store.findKey(key)?.last_used_at).toBe('2026-01-01T00:00:00.000Z');
    store.deleteUser(alice.id);
    expect(store.findKey(key)).toBeNull();
    expect(db.prepare('SELECT count(*) AS n FROM api_keys').get()).toEqual({ n: 0 });
    db.close();
  });

  it('changes a key in place and refuses unknown ids', () => {
    const db = openDatabase(':memory:');
    const store = new IdentityStore(db);
    const { record, key } = store.createKey(spec({ id: null, username: 'u' }), new Date());
    const changed = store.updateKey(record.id, { enabled: false, limits: { ...noLimits, rpm: 5 } });
    expect(changed).toMatchObject({ enabled: false, limits: { rpm: 5, tpm: null, max_parallel: null } });
    expect(store.findKey(key)?.enabled).toBe(false);
    expect(store.updateKey(999, { name: 'x' })).toBeNull();
    expect(store.deleteKey(999)).toBe(false);
    db.close();
  });
});

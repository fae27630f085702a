import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../src/storage/migrations.js';
import { openDatabase, schemaVersion } from '../../src/storage/sqlite-database.js';

describe('openDatabase', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'hangar-db-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('fills key_owners from the keys a version-3 file holds, so their usage stays their owners\' once revoked', () => {
    const file = path.join(dir, 'v3.db');
    const old = openDatabase(file, MIGRATIONS.filter((m) => m.version <= 3));
    const insert = old.prepare("INSERT INTO api_keys (owner_username, key_prefix, key_hash, name, created_at) VALUES (?, 'sk-x', ?, 'k', '2026-01-01T00:00:00Z')");
    insert.run('ann', Buffer.from('a'));
    insert.run('bob', Buffer.from('b'));
    old.close();
    const migrated = openDatabase(file);
    try {
      expect(migrated.prepare('SELECT id, owner_username FROM key_owners ORDER BY id').all()).toEqual([
        { id: 1, owner_username: 'ann' },
        { id: 2, owner_username: 'bob' },
      ]);
    } finally {
      migrated.close();
    }
  });

  it('creates a 0600 WAL database at the newest schema, and reopens it unchanged', () => {
    const file = path.join(dir, 'state', 'hangar.db');
    const old = process.umask(0o022);
    try {
      const db = openDatabase(file);
      expect(schemaVersion(db)).toBe(MIGRATIONS.at(-1)!.version);
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      db.prepare("INSERT INTO meta (name, value) VALUES ('x', 'y')").run();
      db.close();
    } finally {
      process.umask(old);
    }
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    const again = openDatabase(file);
    expect(again.prepare("SELECT value FROM meta WHERE name = 'x'").get()).toEqual({ value: 'y' });
    again.close();
  });

  it('applies only the steps past the stored version, each with its bump', () => {
    const file = path.join(dir, 'steps.db');
    openDatabase(file, [{ version: 1, name: 'a', sql: 'CREATE TABLE a (x)' }]).close();
    const db = openDatabase(file, [
      { version: 1, name: 'a', sql: 'CREATE TABLE a (x)' },
      { version: 2, name: 'b', sql: 'CREATE TABLE b (x)' },
    ]);
    expect(schemaVersion(db)).toBe(2);
    db.close();
  });

  it('rolls a failed step back whole and keeps the version', () => {
    const file = path.join(dir, 'failed.db');
    openDatabase(file, [{ version: 1, name: 'a', sql: 'CREATE TABLE a (x)' }]).close();
    expect(() => openDatabase(file, [
      { version: 1, name: 'a', sql: 'CREATE TABLE a (x)' },
      { version: 2, name: 'half', sql: 'CREATE TABLE b (x); CREATE TABLE a (x)' },
    ])).toThrow(/already exists/);
    const db = openDatabase(file, [{ version: 1, name: 'a', sql: 'CREATE TABLE a (x)' }]);
    expect(schemaVersion(db)).toBe(1);
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'b'").get()).toBeUndefined();
    db.close();
  });

  it('refuses a database written by a newer Hangar', () => {
    const file = path.join(dir, 'newer.db');
    const db = openDatabase(file);
    db.pragma('user_version = 99');
    db.close();
    expect(() => openDatabase(file)).toThrow(/schema version 99, newer/);
    expect(readFileSync(file).length).toBeGreaterThan(0);
  });

  it('refuses a file that is not a database, naming it and what to do, and leaves it as it was', () => {
    const file = path.join(dir, 'hangar.db');
    writeFileSync(file, 'x'.repeat(4096));
    expect(() => openDatabase(file)).toThrow(new RegExp(`the database ${file} cannot be read \\(file is not a database\\).*restore it from a backup, or move it aside`));
    expect(readFileSync(file, 'utf8')).toBe('x'.repeat(4096));
  });
});

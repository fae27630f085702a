import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { MIGRATIONS, type Migration } from './migrations.js';

export type SqliteDatabase = Database.Database;

/**
 * Opens (creating if needed) the embedded database at `file` and brings its schema up
 * to date. WAL mode: readers never wait for the writer, and a commit is one append, so
 * a process killed at any moment leaves the last committed state (SQLite's own
 * guarantee; tested with kill -9 in test/integration/admin-keys.test.ts).
 *
 * The file is created 0600 before SQLite opens it (it holds password hashes and key
 * digests); SQLite gives its -wal and -shm side files the main file's mode.
 */
export function openDatabase(file: string, migrations: readonly Migration[] = MIGRATIONS): SqliteDatabase {
  if (file !== ':memory:') {
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    if (!existsSync(file)) closeSync(openSync(file, 'a', 0o600));
    chmodSync(file, 0o600);
  }
  const db = new Database(file);
  try {
    db.pragma('journal_mode = WAL');
    // NORMAL in WAL mode: a commit survives a process crash (kill -9); only a power
    // cut may lose the last commits, never corrupt the file.
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    db.pragma('busy_timeout = 5000');
    migrate(db, migrations);
  } catch (err) {
    db.close();
    throw unreadable(file, err);
  }
  return db;
}

/**
 * A file that is not a database (or a damaged one) is refused, never replaced: it holds
 * the users, keys, usage and stored responses. The message names it and what to do;
 * SQLite's own ("file is not a database") named neither.
 */
function unreadable(file: string, err: unknown): unknown {
  const code = (err as { code?: unknown }).code;
  if (code !== 'SQLITE_NOTADB' && code !== 'SQLITE_CORRUPT') return err;
  return new Error(`the database ${file} cannot be read (${(err as Error).message}). It holds the users, API keys, usage and stored responses: restore it from a backup, or move it aside to start with an empty one (its users and keys are then gone)`, { cause: err });
}

/** The schema version of an open database (`PRAGMA user_version`). */
export function schemaVersion(db: SqliteDatabase): number {
  return db.pragma('user_version', { simple: true }) as number;
}

function migrate(db: SqliteDatabase, migrations: readonly Migration[]): void {
  const current = schemaVersion(db);
  const newest = migrations.at(-1)?.version ?? 0;
  if (current > newest) {
    throw new Error(`the database is at schema version ${current}, newer than this Hangar knows (${newest}); use the Hangar that wrote it, or a newer one`);
  }
  for (const step of migrations) {
    if (step.version <= current) continue;
    db.transaction(() => {
      db.exec(step.sql);
      db.pragma(`user_version = ${step.version}`);
    }).immediate();
  }
}

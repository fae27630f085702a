import { timingSafeEqual } from 'node:crypto';
import type { SqliteDatabase } from '../storage/sqlite-database.js';
import { keyPrefix, newKeySecret } from './api-key-secret.js';
import { digest } from './secret-digest.js';

export interface UserRecord {
  id: number;
  username: string;
  permissions: string[];
  enabled: boolean;
  created_at: string;
}

export interface KeyLimits {
  /** Requests per minute. */
  rpm: number | null;
  /** Tokens (prompt + completion) per minute. */
  tpm: number | null;
  /** Requests in flight at once. */
  max_parallel: number | null;
}

export interface KeyRecord {
  id: number;
  /** The database user who owns it; null when the owner is a user of the auth config file. */
  user_id: number | null;
  owner_username: string;
  key_prefix: string;
  name: string;
  description: string | null;
  enabled: boolean;
  expires_at: string | null;
  /** Model uids or names it may use; empty: all the owner may use. */
  model_permissions: string[];
  /** Null: whatever its owner holds at the time of use. */
  scopes: string[] | null;
  limits: KeyLimits;
  created_at: string;
  last_used_at: string | null;
}

export interface NewUser {
  username: string;
  passwordHash: string;
  permissions: string[];
}

export interface NewKey {
  owner: { id: number | null; username: string };
  name: string;
  description: string | null;
  expires_at: string | null;
  model_permissions: string[];
  scopes: string[] | null;
  limits: KeyLimits;
}

export type KeyChanges = Partial<Pick<KeyRecord, 'name' | 'description' | 'enabled' | 'expires_at' | 'model_permissions' | 'scopes' | 'limits'>>;

interface KeyRow {
  id: number;
  user_id: number | null;
  owner_username: string;
  key_prefix: string;
  key_hash: Buffer;
  name: string;
  description: string | null;
  enabled: number;
  expires_at: string | null;
  model_permissions: string;
  scopes: string | null;
  rpm: number | null;
  tpm: number | null;
  max_parallel: number | null;
  created_at: string;
  last_used_at: string | null;
}

interface UserRow {
  id: number;
  username: string;
  password_hash: string;
  permissions: string;
  enabled: number;
  created_at: string;
}

/**
 * Database users and API keys (docs/database.md). Every change is one SQLite
 * transaction, then mirrored in memory: the request path (a key lookup per request)
 * never touches the disk. This process is the only writer of the file.
 */
export class IdentityStore {
  private readonly users = new Map<number, UserRecord & { passwordHash: string }>();
  /** The same users by name: every token of a database user is checked against it. */
  private readonly usersByName = new Map<string, UserRecord & { passwordHash: string }>();
  private readonly keys = new Map<number, KeyRecord & { hash: Buffer }>();
  private readonly keysByPrefix = new Map<string, Set<number>>();
  /** last_used_at stamps (ms) not yet written (written in batches, off the request path). */
  private readonly touched = new Map<number, number>();
  private changes = 0;

  constructor(private readonly db: SqliteDatabase) {
    for (const row of db.prepare('SELECT * FROM users').all() as UserRow[]) this.cacheUser(row);
    for (const row of db.prepare('SELECT * FROM api_keys').all() as KeyRow[]) this.cacheKey(row);
  }

  /** Counts every change to a user or key: what was worked out from them before is stale. */
  get version(): number {
    return this.changes;
  }

  // --- users

  hasUsers(): boolean {
    return this.users.size > 0;
  }

  listUsers(): UserRecord[] {
    return [...this.users.values()].map(publicUser);
  }

  user(id: number): UserRecord | null {
    const user = this.users.get(id);
    return user ? publicUser(user) : null;
  }

  userByName(username: string): (UserRecord & { passwordHash: string }) | null {
    return this.usersByName.get(username) ?? null;
  }

  createUser(user: NewUser, now: Date): UserRecord {
    const row = this.db
      .prepare('INSERT INTO users (username, password_hash, permissions, created_at) VALUES (?, ?, ?, ?) RETURNING *')
      .get(user.username, user.passwordHash, JSON.stringify(user.permissions), now.toISOString()) as UserRow;
    return publicUser(this.cacheUser(row));
  }

  updateUser(id: number, changes: { permissions?: string[]; enabled?: boolean; passwordHash?: string }): UserRecord | null {
    const current = this.users.get(id);
    if (!current) return null;
    const row = this.db
      .prepare('UPDATE users SET permissions = ?, enabled = ?, password_hash = ? WHERE id = ? RETURNING *')
      .get(
        JSON.stringify(changes.permissions ?? current.permissions),
        (changes.enabled ?? current.enabled) ? 1 : 0,
        changes.passwordHash ?? current.passwordHash,
        id,
      ) as UserRow;
    return publicUser(this.cacheUser(row));
  }

  /**
   * Removes the user and, by the foreign key, every key they own. Their keys' usage stays
   * theirs under a name no new account can take (`carol (deleted user 3)`): owners are
   * usernames, and a new `carol` must not see the old one's usage as her own.
   */
  deleteUser(id: number): boolean {
    if (!this.users.has(id)) return false;
    const username = this.users.get(id)!.username;
    this.db.transaction(() => {
      this.db.prepare('UPDATE key_owners SET owner_username = ? WHERE owner_username = ?').run(`${username} (deleted user ${id})`, username);
      this.db.prepare('DELETE FROM users WHERE id = ?').run(id);
    })();
    this.usersByName.delete(username);
    this.users.delete(id);
    this.changes++;
    for (const key of [...this.keys.values()]) if (key.user_id === id) this.forgetKey(key.id);
    return true;
  }

  // --- keys

  /** Stores a new key; the clear key is returned here and nowhere else, ever. */
  createKey(spec: NewKey, now: Date): { record: KeyRecord; key: string } {
    const secret = newKeySecret();
    const row = this.db.transaction(() => {
      const inserted = this.insertKey(spec, secret, now);
      // Kept after the key is revoked: its usage stays its owner's (usage-ledger.ts).
      this.db.prepare('INSERT INTO key_owners (id, owner_username) VALUES (?, ?)').run(inserted.id, spec.owner.username);
      return inserted;
    })();
    return { record: publicKey(this.cacheKey(row)), key: secret.key };
  }

  /** Ids of every key `ownerUsername` has had, revoked ones too: whose usage is theirs. */
  keyIdsEverOwnedBy(ownerUsername: string): number[] {
    return (this.db.prepare('SELECT id FROM key_owners WHERE owner_username = ?').all(ownerUsername) as Array<{ id: number }>).map((r) => r.id);
  }

  private insertKey(spec: NewKey, secret: ReturnType<typeof newKeySecret>, now: Date): KeyRow {
    return this.db
      .prepare(
        `INSERT INTO api_keys (user_id, owner_username, key_prefix, key_hash, name, description, expires_at,
           model_permissions, scopes, rpm, tpm, max_parallel, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
      )
      .get(
        spec.owner.id,
        spec.owner.username,
        secret.prefix,
        secret.hash,
        spec.name,
        spec.description,
        spec.expires_at,
        JSON.stringify(spec.model_permissions),
        spec.scopes === null ? null : JSON.stringify(spec.scopes),
        spec.limits.rpm,
        spec.limits.tpm,
        spec.limits.max_parallel,
        now.toISOString(),
      ) as KeyRow;
  }

  listKeys(ownerUsername?: string): KeyRecord[] {
    const all = [...this.keys.values()].map((k) => this.withTouch(publicKey(k)));
    return ownerUsername === undefined ? all : all.filter((k) => k.owner_username === ownerUsername);
  }

  key(id: number): KeyRecord | null {
    const key = this.keys.get(id);
    return key ? this.withTouch(publicKey(key)) : null;
  }

  updateKey(id: number, changes: KeyChanges): KeyRecord | null {
    const current = this.keys.get(id);
    if (!current) return null;
    const next = { ...current, ...changes, limits: { ...current.limits, ...changes.limits } };
    const row = this.db
      .prepare(
        `UPDATE api_keys SET name = ?, description = ?, enabled = ?, expires_at = ?, model_permissions = ?, scopes = ?,
           rpm = ?, tpm = ?, max_parallel = ? WHERE id = ? RETURNING *`,
      )
      .get(
        next.name,
        next.description,
        next.enabled ? 1 : 0,
        next.expires_at,
        JSON.stringify(next.model_permissions),
        next.scopes === null ? null : JSON.stringify(next.scopes),
        next.limits.rpm,
        next.limits.tpm,
        next.limits.max_parallel,
        id,
      ) as KeyRow;
    return this.withTouch(publicKey(this.cacheKey(row)));
  }

  deleteKey(id: number): boolean {
    if (!this.keys.has(id)) return false;
    this.db.prepare('DELETE FROM api_keys WHERE id = ?').run(id);
    this.forgetKey(id);
    return true;
  }

  /**
   * The key a presented credential is, or null. The prefix narrows the candidates (it
   * is not secret); the digests are compared in constant time.
   */
  findKey(presented: string): KeyRecord | null {
    // The caller (Authenticator) has matched DATABASE_KEY_PATTERN already; the prefix
    // lookup below refuses anything else anyway.
    const ids = this.keysByPrefix.get(keyPrefix(presented));
    if (!ids) return null;
    const hash = digest(presented);
    let found: KeyRecord | null = null;
    for (const id of ids) {
      const key = this.keys.get(id)!;
      if (timingSafeEqual(key.hash, hash)) found = key;
    }
    return found;
  }

  /** Notes a key's use (ms since the epoch); written by flushTouches. */
  touch(id: number, nowMs: number): void {
    this.touched.set(id, nowMs);
  }

  flushTouches(): void {
    if (this.touched.size === 0) return;
    const update = this.db.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ?');
    const stamps = [...this.touched].map(([id, ms]) => [id, new Date(ms).toISOString()] as const);
    this.db.transaction(() => {
      for (const [id, at] of stamps) update.run(at, id);
    })();
    for (const [id, at] of stamps) {
      const key = this.keys.get(id);
      if (key) key.last_used_at = at;
    }
    this.touched.clear();
  }

  // --- settings kept beside the identities

  /** A value kept in the meta table, created by `make` on first use. */
  meta(name: string, make: () => string): string {
    const row = this.db.prepare('SELECT value FROM meta WHERE name = ?').get(name) as { value: string } | undefined;
    if (row) return row.value;
    const value = make();
    this.db.prepare('INSERT INTO meta (name, value) VALUES (?, ?)').run(name, value);
    return value;
  }

  private withTouch(key: KeyRecord): KeyRecord {
    const at = this.touched.get(key.id);
    return at === undefined ? key : { ...key, last_used_at: new Date(at).toISOString() };
  }

  private cacheUser(row: UserRow): UserRecord & { passwordHash: string } {
    const user = {
      id: row.id,
      username: row.username,
      permissions: JSON.parse(row.permissions) as string[],
      enabled: row.enabled === 1,
      created_at: row.created_at,
      passwordHash: row.password_hash,
    };
    this.users.set(user.id, user);
    this.usersByName.set(user.username, user);
    this.changes++;
    return user;
  }

  private cacheKey(row: KeyRow): KeyRecord & { hash: Buffer } {
    const key = {
      id: row.id,
      user_id: row.user_id,
      owner_username: row.owner_username,
      key_prefix: row.key_prefix,
      name: row.name,
      description: row.description,
      enabled: row.enabled === 1,
      expires_at: row.expires_at,
      model_permissions: JSON.parse(row.model_permissions) as string[],
      scopes: row.scopes === null ? null : (JSON.parse(row.scopes) as string[]),
      limits: { rpm: row.rpm, tpm: row.tpm, max_parallel: row.max_parallel },
      created_at: row.created_at,
      last_used_at: row.last_used_at,
      hash: Buffer.from(row.key_hash),
    };
    this.keys.set(key.id, key);
    this.changes++;
    let ids = this.keysByPrefix.get(key.key_prefix);
    if (!ids) this.keysByPrefix.set(key.key_prefix, (ids = new Set()));
    ids.add(key.id);
    return key;
  }

  private forgetKey(id: number): void {
    const key = this.keys.get(id);
    if (!key) return;
    this.changes++;
    this.keys.delete(id);
    this.touched.delete(id);
    const ids = this.keysByPrefix.get(key.key_prefix);
    ids?.delete(id);
    if (ids?.size === 0) this.keysByPrefix.delete(key.key_prefix);
  }
}

function publicUser(user: UserRecord & { passwordHash?: string }): UserRecord {
  return { id: user.id, username: user.username, permissions: [...user.permissions], enabled: user.enabled, created_at: user.created_at };
}

function publicKey(key: KeyRecord & { hash?: Buffer }): KeyRecord {
  const { hash: _hash, ...rest } = key;
  return { ...rest, model_permissions: [...rest.model_permissions], scopes: rest.scopes ? [...rest.scopes] : null, limits: { ...rest.limits } };
}

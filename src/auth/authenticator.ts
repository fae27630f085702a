import { createHmac, randomBytes } from 'node:crypto';
import type { AuthConfig } from './auth-config.js';
import { API_KEY_PATTERN } from './auth-config.js';
import { DATABASE_KEY_PATTERN } from './api-key-secret.js';
import type { IdentityStore, KeyRecord } from './identity-store.js';
import { signToken, verifyToken, type JwtSettings } from './jwt.js';
import { dummyPasswordHash, verifyPassword } from './password-hash.js';
import { expandScopes } from './permissions.js';
import { ConnectionCredentials } from './connection-credentials.js';
import { digest, sameDigest, sameText } from './secret-digest.js';

/** Who a request is, and what it may do (aliases expanded). */
export interface Principal {
  username: string;
  scopes: ReadonlySet<string>;
  /** The database user's id; null for a user of the auth config file. */
  userId: number | null;
  /** The database API key the request came with; null for tokens and auth-config keys. */
  key: KeyRecord | null;
}

/** A user as the key and user routes see one, from either source. */
export interface KnownUser {
  id: number | null;
  username: string;
  permissions: string[];
  source: 'config' | 'database';
}

/** A key credential, looked up: a database key's record (its expiry and owner are checked per request), or an auth-config key's principal. */
type FoundKey = { key: KeyRecord | null } | { principal: Principal | null };

// Compared against when the username is unknown, so a miss costs the same as a hit.
const DUMMY_DIGEST = digest('hangar: no such user');

interface StaticUser {
  username: string;
  passwordDigest: Buffer;
  permissions: string[];
}

/**
 * The users of the auth config file and of the database (docs/auth.md): login, and
 * turning a bearer credential into a Principal. Authentication is on when either
 * source has a user; the file's users and keys are read-only here.
 */
export class Authenticator {
  private readonly staticUsers = new Map<string, StaticUser>();
  private readonly staticKeys: Array<{ keyDigest: Buffer; username: string }> = [];
  private readonly jwt: JwtSettings;
  /** What each connection's last key was found to be (the SHA-256 and lookup saved on the next request). */
  private readonly connectionKeys = new ConnectionCredentials<FoundKey>();
  /** A database key's principal, worked out once per identities version (the request path reuses it). */
  private readonly keyPrincipals = new Map<number, Principal | null>();
  private principalsVersion = -1;

  constructor(
    private readonly config: AuthConfig | null,
    private readonly identities: IdentityStore,
    private readonly now: () => number = Date.now,
  ) {
    for (const user of config?.user_config ?? []) {
      this.staticUsers.set(user.username, { username: user.username, passwordDigest: digest(user.password), permissions: user.permissions });
      for (const key of user.api_keys) this.staticKeys.push({ keyDigest: digest(key), username: user.username });
    }
    this.jwt = config
      ? {
        algorithm: config.auth_config.algorithm,
        secret: new TextEncoder().encode(config.auth_config.secret_key),
        expireInMinutes: config.auth_config.token_expire_in_minutes,
        enforceExpiry: config.auth_config.enforce_expiry,
      }
      : {
        // No file, so no configured secret: one made on first start and kept in the
        // database (0600), so tokens outlive a restart. Expiry is enforced: there is
        // no Xinference 2.0 habit to keep here.
        algorithm: 'HS256',
        secret: new TextEncoder().encode(identities.meta('jwt_secret', () => randomBytes(32).toString('hex'))),
        expireInMinutes: 60,
        enforceExpiry: true,
      };
  }

  /** Whether requests need a credential: the auth config file, or any database user. */
  get enabled(): boolean {
    return this.config !== null || this.identities.hasUsers();
  }

  /** A signed token for a correct username and password, else null. */
  async login(username: string, password: string): Promise<string | null> {
    const fromFile = this.staticUsers.get(username);
    if (fromFile) {
      // With database users an unknown name costs a scrypt (below): so does a file user's
      // login, or its speed would tell which names the file holds (its admins, mostly).
      if (this.identities.hasUsers()) await verifyPassword(password, await dummyPasswordHash());
      return sameDigest(fromFile.passwordDigest, digest(password)) ? signToken(this.jwt, username, fromFile.permissions) : null;
    }
    const user = this.identities.userByName(username);
    // An unknown name costs what a known one does: a digest comparison when only the
    // file has users, one scrypt when the database has some.
    if (!user && !this.identities.hasUsers()) return (sameDigest(DUMMY_DIGEST, digest(password)), null);
    const ok = await verifyPassword(password, user?.passwordHash ?? (await dummyPasswordHash()));
    if (!ok || !user?.enabled) return null;
    return signToken(this.jwt, user.username, user.permissions, { uid: user.id, pwd: this.passwordStamp(user.passwordHash) });
  }

  /**
   * A database key (`sk-` + 48) is found by its prefix and compared in constant time;
   * an auth-config key (`sk-` + 13) is compared against every key of the file, so the
   * time does not depend on which matched; anything else is read as a JWT. A token's
   * user must still exist; a database user's current permissions apply, not those at
   * login, so a change or a disable takes effect at once.
   */
  authenticate(credential: string, connection?: object): Principal | null | Promise<Principal | null> {
    // Keys are answered at once (no promise on the per-request path); tokens need jose's async verify.
    const version = this.identities.version;
    let found = connection ? this.connectionKeys.get(connection, credential, version) : undefined;
    if (found === undefined) {
      if (DATABASE_KEY_PATTERN.test(credential)) found = { key: this.identities.findKey(credential) };
      else if (API_KEY_PATTERN.test(credential)) found = { principal: this.byConfigKey(credential) };
      else return this.byToken(credential);
      if (connection) this.connectionKeys.set(connection, credential, version, found);
    }
    return 'principal' in found ? found.principal : this.byDatabaseKey(found.key);
  }

  private byConfigKey(credential: string): Principal | null {
    const presented = digest(credential);
    let owner: string | null = null;
    for (const { keyDigest, username } of this.staticKeys) if (sameDigest(keyDigest, presented)) owner = username;
    const user = owner === null ? undefined : this.staticUsers.get(owner);
    return user ? { username: user.username, scopes: expandScopes(user.permissions), userId: null, key: null } : null;
  }

  private async byToken(credential: string): Promise<Principal | null> {
    const claims = await verifyToken(this.jwt, credential);
    if (!claims) return null;
    // An auth-config user's token holds what it was issued with, cut down to what the
    // file grants now: a permission taken away (and the service restarted) is gone
    // from tokens issued before, as it is for database users.
    const fileUser = this.staticUsers.get(claims.sub);
    if (fileUser) return { username: claims.sub, scopes: keyScopes({ scopes: claims.scopes }, expandScopes(fileUser.permissions)), userId: null, key: null };
    const user = this.identities.userByName(claims.sub);
    if (!user?.enabled) return null;
    // The user it was issued to, with the password it was issued for: a user deleted and
    // made again under the same name, or a changed password, ends the old tokens.
    if (claims.uid !== user.id || typeof claims.pwd !== 'string' || !sameText(claims.pwd, this.passwordStamp(user.passwordHash))) return null;
    return { username: user.username, scopes: expandScopes(user.permissions), userId: user.id, key: null };
  }

  /** Names a password hash without telling anything about it to whoever reads a token (an HMAC under the signing secret). */
  private passwordStamp(passwordHash: string): string {
    return createHmac('sha256', this.jwt.secret).update(passwordHash).digest('base64url').slice(0, 22);
  }

  /** A user of either source by name; the file's users win (they cannot be shadowed). */
  user(username: string): KnownUser | null {
    const fromFile = this.staticUsers.get(username);
    if (fromFile) return { id: null, username, permissions: fromFile.permissions, source: 'config' };
    const user = this.identities.userByName(username);
    return user?.enabled ? { id: user.id, username, permissions: user.permissions, source: 'database' } : null;
  }

  /** The auth config file's users (read-only here). */
  configUsers(): Array<{ username: string; permissions: string[] }> {
    return [...this.staticUsers.values()].map((u) => ({ username: u.username, permissions: [...u.permissions] }));
  }

  isConfigUser(username: string): boolean {
    return this.staticUsers.has(username);
  }

  /** A found database key (or none) to its principal: expiry is checked on every request. */
  private byDatabaseKey(key: KeyRecord | null): Principal | null {
    if (!key) return null;
    const now = this.now();
    if (key.expires_at !== null && Date.parse(key.expires_at) <= now) return null;
    if (this.principalsVersion !== this.identities.version) {
      this.keyPrincipals.clear();
      this.principalsVersion = this.identities.version;
    }
    let principal = this.keyPrincipals.get(key.id);
    if (principal === undefined) this.keyPrincipals.set(key.id, (principal = this.keyPrincipal(key)));
    if (principal) this.identities.touch(key.id, now);
    return principal;
  }

  private keyPrincipal(key: KeyRecord): Principal | null {
    if (!key.enabled) return null;
    // A database user's key follows that user (by id), never a file user who later
    // took the same name: the file's users win by name, which must not lend their
    // permissions to someone else's keys.
    const dbOwner = key.user_id === null ? null : this.identities.user(key.user_id);
    const owner: KnownUser | null = key.user_id === null
      ? (this.staticUsers.has(key.owner_username) ? this.user(key.owner_username) : null)
      : dbOwner?.enabled ? { id: dbOwner.id, username: dbOwner.username, permissions: dbOwner.permissions, source: 'database' } : null;
    if (!owner) return null;
    return { username: owner.username, scopes: keyScopes(key, expandScopes(owner.permissions)), userId: owner.id, key };
  }
}

/** A key's own scopes, cut down to what its owner holds now; none set: the owner's. */
export function keyScopes(key: Pick<KeyRecord, 'scopes'>, ownerScopes: ReadonlySet<string>): Set<string> {
  if (key.scopes === null) return new Set(ownerScopes);
  const out = new Set<string>();
  for (const scope of expandScopes(key.scopes)) if (ownerScopes.has('admin') || ownerScopes.has(scope)) out.add(scope);
  return out;
}

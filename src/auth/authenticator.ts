import type { AuthConfig } from './auth-config.js';
import { API_KEY_PATTERN } from './auth-config.js';
import { signToken, verifyToken, type JwtSettings } from './jwt.js';
import { expandScopes } from './permissions.js';
import { digest, sameDigest } from './secret-digest.js';

/** Who a request is, and what it may do (aliases expanded). */
export interface Principal {
  username: string;
  scopes: ReadonlySet<string>;
}

interface StoredUser {
  username: string;
  passwordDigest: Buffer;
  permissions: string[];
}

// Compared against when the username is unknown, so a miss costs the same as a hit.
const DUMMY_DIGEST = digest('hangar: no such user');

/** The users of an auth config: login, and turning a bearer credential into a Principal. */
export class Authenticator {
  private readonly users = new Map<string, StoredUser>();
  private readonly keys: Array<{ keyDigest: Buffer; username: string }> = [];
  private readonly jwt: JwtSettings;

  constructor(config: AuthConfig) {
    for (const user of config.user_config) {
      this.users.set(user.username, { username: user.username, passwordDigest: digest(user.password), permissions: user.permissions });
      for (const key of user.api_keys) this.keys.push({ keyDigest: digest(key), username: user.username });
    }
    this.jwt = {
      algorithm: config.auth_config.algorithm,
      secret: new TextEncoder().encode(config.auth_config.secret_key),
      expireInMinutes: config.auth_config.token_expire_in_minutes,
      enforceExpiry: config.auth_config.enforce_expiry,
    };
  }

  /** A signed token for a correct username and password, else null. */
  async login(username: string, password: string): Promise<string | null> {
    const user = this.users.get(username);
    const ok = sameDigest(user?.passwordDigest ?? DUMMY_DIGEST, digest(password)) && user !== undefined;
    if (!ok) return null;
    return signToken(this.jwt, user.username, user.permissions);
  }

  /**
   * An API key (`sk-` + 13) is looked up among all keys, every one compared so the
   * time does not depend on which matched; anything else is read as a JWT. A token's
   * scopes are those granted at login, but its user must still exist.
   */
  async authenticate(credential: string): Promise<Principal | null> {
    if (API_KEY_PATTERN.test(credential)) {
      const presented = digest(credential);
      let owner: string | null = null;
      for (const { keyDigest, username } of this.keys) if (sameDigest(keyDigest, presented)) owner = username;
      const user = owner === null ? undefined : this.users.get(owner);
      return user ? { username: user.username, scopes: expandScopes(user.permissions) } : null;
    }
    const claims = await verifyToken(this.jwt, credential);
    if (!claims || !this.users.has(claims.sub)) return null;
    return { username: claims.sub, scopes: expandScopes(claims.scopes) };
  }
}

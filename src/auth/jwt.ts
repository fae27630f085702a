import { SignJWT, compactVerify } from 'jose';

export interface TokenClaims {
  sub: string;
  scopes: string[];
  exp?: number;
  /**
   * A database user's token only (ours, not Xinference's): the user's id and a stamp of
   * their password at login, so a token dies with its user, never passes to a new
   * user of the same name, and dies when the password changes.
   */
  uid?: number;
  pwd?: string;
}

export interface JwtSettings {
  algorithm: 'HS256' | 'HS384' | 'HS512';
  secret: Uint8Array;
  expireInMinutes: number;
  enforceExpiry: boolean;
}

export function signToken(settings: JwtSettings, username: string, scopes: string[], holder: { uid: number; pwd: string } | null = null): Promise<string> {
  return new SignJWT(holder ? { scopes, uid: holder.uid, pwd: holder.pwd } : { scopes })
    .setProtectedHeader({ alg: settings.algorithm, typ: 'JWT' })
    .setSubject(username)
    .setExpirationTime(Math.floor(Date.now() / 1000) + settings.expireInMinutes * 60)
    .sign(settings.secret);
}

/**
 * Verifies the signature with the configured algorithm only (so `alg: none` or another
 * algorithm is refused), then reads the claims. Xinference 2.0 does not check `exp`
 * (contract §6); `enforce_expiry` turns the check on. Returns null for anything invalid.
 */
export async function verifyToken(settings: JwtSettings, token: string): Promise<TokenClaims | null> {
  let payload: unknown;
  try {
    const verified = await compactVerify(token, settings.secret, { algorithms: [settings.algorithm] });
    payload = JSON.parse(new TextDecoder().decode(verified.payload));
  } catch {
    return null;
  }
  if (!payload || typeof payload !== 'object') return null;
  const { sub, scopes, exp, uid, pwd } = payload as Record<string, unknown>;
  if (typeof sub !== 'string' || sub.length === 0) return null;
  if (!Array.isArray(scopes) || !scopes.every((s) => typeof s === 'string')) return null;
  if (exp !== undefined && typeof exp !== 'number') return null;
  if ((uid !== undefined && !Number.isSafeInteger(uid)) || (pwd !== undefined && typeof pwd !== 'string')) return null;
  if (settings.enforceExpiry && (exp === undefined || exp * 1000 <= Date.now())) return null;
  return {
    sub,
    scopes,
    ...(exp === undefined ? {} : { exp }),
    ...(typeof uid === 'number' ? { uid } : {}),
    ...(typeof pwd === 'string' ? { pwd } : {}),
  };
}

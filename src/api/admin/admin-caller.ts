import type { FastifyRequest } from 'fastify';
import type { AccessControl } from '../../auth/access-control.js';
import type { KnownUser } from '../../auth/authenticator.js';
import type { KeyRecord } from '../../auth/identity-store.js';
import { expandScopes, PERMISSIONS } from '../../auth/permissions.js';
import { HangarError } from '../../errors/hangar-error.js';

/** Who an admin action is written down as: the username, or `(auth off)`. */
export function actorOf(request: FastifyRequest): string {
  return request.principal?.username ?? '(auth off)';
}

/** With `keys:manage` (or `admin`, or auth off) a caller sees and changes every key; else only their own. */
export function managesAllKeys(request: FastifyRequest): boolean {
  const scopes = request.principal?.scopes;
  return !scopes || scopes.has('admin') || scopes.has('keys:manage');
}

/**
 * What of `permissions` the caller does not hold: nothing for `admin`, or with auth off.
 * A caller may grant only what they hold, and may act for a user (make them a key, set
 * their password, change, disable or delete them) only when that user holds nothing
 * more: else `users:manage` or `keys:manage` became `admin` by taking over an admin's
 * account (Xinference 3 refuses the same for grants and for admin targets).
 */
export function notHeldByCaller(request: FastifyRequest, permissions: readonly string[]): string[] {
  const scopes = request.principal?.scopes;
  if (!scopes || scopes.has('admin')) return [];
  const wanted = expandScopes(permissions);
  return PERMISSIONS.filter((p) => wanted.has(p) && !scopes.has(p));
}

/** 403 `user_holds_more` when the caller may not act for `user` (notHeldByCaller). */
export function requireNoMoreThanCaller(request: FastifyRequest, user: { username: string; permissions: readonly string[] }, action: string): void {
  const missing = notHeldByCaller(request, user.permissions);
  if (missing.length > 0) throw new HangarError('user_holds_more', [action, user.username, missing.join(', ')]);
}

/** 403 `permission_not_grantable` when `permissions` hold one the caller does not (notHeldByCaller). */
export function requireGrantable(request: FastifyRequest, permissions: readonly string[]): void {
  const missing = notHeldByCaller(request, permissions);
  if (missing.length > 0) throw new HangarError('permission_not_grantable', [missing.join(', ')], { param: 'permissions' });
}

/** A key the caller may see, else 404 (the same answer as for no key: ids are not probed). */
export function visibleKey(access: AccessControl, request: FastifyRequest, id: number): KeyRecord {
  const key = access.identities.key(id);
  if (!key || (!managesAllKeys(request) && key.owner_username !== request.principal?.username)) {
    throw new HangarError('key_not_found', [id]);
  }
  return key;
}

/**
 * A user named by id (a database user) or by username (either source). A name of
 * digits (`?owner=5`, the CLI's `--owner 5`) is the username when a user has it, else
 * the id: a user may be called "1", and the query string has no numbers.
 */
export function userNamed(access: AccessControl, owner: number | string): KnownUser {
  if (typeof owner === 'string' && /^\d{1,15}$/.test(owner) && !access.authenticator.isConfigUser(owner) && !access.identities.userByName(owner)) {
    owner = Number(owner);
  }
  const name = typeof owner === 'number' ? access.identities.user(owner)?.username : owner;
  const user = name === undefined ? null : access.authenticator.user(name);
  if (!user) {
    // A disabled account is there, and says so: "not found" sent operators looking for a typo.
    const stored = typeof owner === 'number' ? access.identities.user(owner) : access.identities.userByName(owner);
    if (stored && !stored.enabled) throw new HangarError('user_disabled', [stored.username], { param: 'owner' });
    throw new HangarError('user_not_found', [owner], { param: 'owner' });
  }
  return user;
}

/** The public view of a key (never its hash): what GET /v1/admin/keys lists. */
export function keyView(key: KeyRecord): Record<string, unknown> {
  return {
    id: key.id,
    user_id: key.user_id,
    owner_username: key.owner_username,
    key_prefix: key.key_prefix,
    name: key.name,
    description: key.description,
    enabled: key.enabled,
    expires_at: key.expires_at,
    model_permissions: key.model_permissions,
    scopes: key.scopes,
    limits: key.limits,
    created_at: key.created_at,
    last_used_at: key.last_used_at,
  };
}

/**
 * A request made with a database key that has restrictions of its own (scopes, models,
 * limits, an expiry) may not create or change keys or users: the key made or changed
 * (itself included) could hold what the calling key does not, which turned a key limited
 * to one model and `keys:create` into an unrestricted one, and its owner's password set
 * by the key was a way out of its limits. Revoking stays allowed: it only takes away.
 */
export function refuseRestrictedKey(request: FastifyRequest): void {
  const key = request.principal?.key;
  if (!key) return;
  const restrictions = [
    key.scopes !== null && 'scopes',
    key.model_permissions.length > 0 && 'model_permissions',
    (key.limits.rpm !== null || key.limits.tpm !== null || key.limits.max_parallel !== null) && 'limits',
    // A key that expires could make one that does not, or lift its own expiry.
    key.expires_at !== null && 'expires_at',
  ].filter((r): r is string => typeof r === 'string');
  if (restrictions.length > 0) throw new HangarError('key_restricted', [restrictions.join(', ')]);
}

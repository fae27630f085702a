import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import type { AccessControl } from '../../auth/access-control.js';
import type { KnownUser } from '../../auth/authenticator.js';
import type { KeyChanges } from '../../auth/identity-store.js';
import { expandScopes } from '../../auth/permissions.js';
import { HangarError } from '../../errors/hangar-error.js';
import { needs } from '../auth/route-permission.js';
import { actorOf, keyView, managesAllKeys, refuseRestrictedKey, requireNoMoreThanCaller, userNamed, visibleKey } from './admin-caller.js';
import { createKeyBody, idParams, keysQuery, updateKeyBody } from './schema.js';

/**
 * Database API keys (docs/auth.md, "Keys and users"): Xinference 3's /v1/admin/keys.
 * The clear key is in the 201 answer and nowhere else (no "reveal" route, unlike
 * Xinference 3: only a digest is stored). Without `keys:manage`, a caller sees,
 * creates, changes and revokes only their own keys.
 */
export const keyRoutes: FastifyPluginAsync<{ access: AccessControl }> = async (fastify, { access }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const tags = ['admin'];
  const now = (): Date => new Date(access.now());

  app.post('/v1/admin/keys', { ...needs('keys:create'), schema: { body: createKeyBody, tags } }, async (request, reply) => {
    refuseRestrictedKey(request);
    // The one answer that holds the key in clear: kept by no cache.
    reply.header('cache-control', 'no-store');
    const body = request.body;
    const owner = ownerOf(request, body.owner ?? null);
    checkScopes(owner, body.scopes ?? null);
    checkExpiry(body.expires_at ?? null);
    const limits = { rpm: body.limits?.rpm ?? null, tpm: body.limits?.tpm ?? null, max_parallel: body.limits?.max_parallel ?? null };
    const { record, key } = access.identities.createKey(
      {
        owner: { id: owner.id, username: owner.username },
        name: body.name,
        description: body.description ?? null,
        expires_at: body.expires_at ?? null,
        model_permissions: body.model_permissions,
        scopes: body.scopes ?? null,
        limits,
      },
      now(),
    );
    access.audit.record(actorOf(request), 'key.create', `key:${record.id}`, auditDetail(record.key_prefix, record.owner_username, body), now());
    return reply.code(201).send({ id: record.id, key, prefix: record.key_prefix, name: record.name });
  });

  app.get('/v1/admin/keys', { ...needs('keys:read'), schema: { querystring: keysQuery, tags } }, async (request) => {
    // Without keys:manage the list is the caller's own, whatever `owner` says, and the
    // name is not looked up: a "not found" or "disabled" answer told who has an account.
    if (!managesAllKeys(request)) return access.identities.listKeys(request.principal!.username).map(keyView);
    const requested = request.query.owner;
    return access.identities.listKeys(requested === undefined ? undefined : userNamed(access, requested).username).map(keyView);
  });

  app.get('/v1/admin/keys/:id', { ...needs('keys:read'), schema: { params: idParams, tags } }, async (request) => keyView(visibleKey(access, request, request.params.id)));

  app.put('/v1/admin/keys/:id', { ...needs('keys:create'), schema: { params: idParams, body: updateKeyBody, tags } }, async (request) => {
    refuseRestrictedKey(request);
    const key = visibleKey(access, request, request.params.id);
    const body = request.body;
    // Changing a stronger user's key (lifting its scopes, enabling it, dropping its expiry)
    // handed keys:manage what that user holds, as making them a key did.
    // A disabled owner counts with what they hold (they may be enabled again).
    const held = access.authenticator.user(key.owner_username)?.permissions ?? access.identities.userByName(key.owner_username)?.permissions ?? [];
    requireNoMoreThanCaller(request, { username: key.owner_username, permissions: held }, 'change a key of');
    if (body.scopes !== undefined) checkScopes(userNamed(access, key.owner_username), body.scopes);
    // A past expires_at is allowed here: it is how a key is made to expire now.
    const changes: KeyChanges = {};
    for (const field of ['name', 'description', 'enabled', 'expires_at', 'model_permissions', 'scopes'] as const) {
      if (body[field] !== undefined) (changes as Record<string, unknown>)[field] = body[field];
    }
    if (body.limits) changes.limits = { ...key.limits, ...Object.fromEntries(Object.entries(body.limits).filter(([, v]) => v !== undefined)) };
    access.identities.updateKey(key.id, changes);
    if (changes.limits) access.limiter.forget(key.id);
    access.audit.record(actorOf(request), 'key.update', `key:${key.id}`, auditDetail(key.key_prefix, key.owner_username, body), now());
    return { ok: true };
  });

  app.delete('/v1/admin/keys/:id', { ...needs('keys:create'), schema: { params: idParams, tags } }, async (request) => {
    const key = visibleKey(access, request, request.params.id);
    access.identities.deleteKey(key.id);
    access.limiter.forget(key.id);
    request.server.metrics.keys.forgetKey(key.id);
    access.audit.record(actorOf(request), 'key.revoke', `key:${key.id}`, { prefix: key.key_prefix, owner: key.owner_username, name: key.name }, now());
    return { ok: true };
  });

  /** The key's owner: the caller unless named; naming another needs `keys:manage`. */
  function ownerOf(request: FastifyRequest, named: number | string | null): KnownUser {
    const caller = request.principal?.username;
    if (named === null) {
      if (!caller) throw new HangarError('invalid_field', ['owner: authentication is off, so there is no caller to own the key; name its owner'], { param: 'owner' });
      return userNamed(access, caller);
    }
    if (!managesAllKeys(request)) {
      // Only the caller's own name (or id) is looked up: any other is refused as such,
      // so the answer says nothing of whether that account exists.
      const me = caller ? userNamed(access, caller) : null;
      if (me && (String(named) === me.username || (me.id !== null && String(named) === String(me.id)))) return me;
      throw new HangarError('permission_denied', [], { headers: { 'www-authenticate': 'Bearer scope="keys:manage"' } });
    }
    const owner = userNamed(access, named);
    // The clear key is in the answer: a key of a user who holds more is that user's power.
    requireNoMoreThanCaller(request, owner, 'make a key for');
    return owner;
  }
};


/** A key may hold only what its owner holds (admin holds everything). */
function checkScopes(owner: KnownUser, scopes: string[] | null): void {
  if (scopes === null) return;
  const held = expandScopes(owner.permissions);
  if (held.has('admin')) return;
  for (const scope of expandScopes(scopes)) {
    if (!held.has(scope)) throw new HangarError('key_scope_not_held', [owner.username, scope], { param: 'scopes' });
  }
}

function checkExpiry(expiresAt: string | null): void {
  if (expiresAt !== null && Date.parse(expiresAt) <= Date.now()) {
    throw new HangarError('invalid_field', [`expires_at: ${expiresAt} is in the past`], { param: 'expires_at' });
  }
}

/** What the audit log keeps of a key change: its settings, never the key. */
function auditDetail(prefix: string, owner: string, body: Partial<z.infer<typeof updateKeyBody>>): Record<string, unknown> {
  // The owner last: a body's `owner: null` (the caller) must not stand for the owner's name.
  return { ...body, prefix, owner };
}

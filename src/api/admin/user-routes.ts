import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { AccessControl } from '../../auth/access-control.js';
import type { UserRecord } from '../../auth/identity-store.js';
import { hashPassword } from '../../auth/password-hash.js';
import { expandScopes } from '../../auth/permissions.js';
import { HangarError } from '../../errors/hangar-error.js';
import { needs } from '../auth/route-permission.js';
import { actorOf, refuseRestrictedKey, requireGrantable, requireNoMoreThanCaller } from './admin-caller.js';
import { createUserBody, idParams, passwordBody, updateUserBody } from './schema.js';
import type { ResponseStore } from '../../storage/response-store.js';

/**
 * Database users (docs/auth.md, "Keys and users"): Xinference 3's /v1/admin/users,
 * scope `users:manage`. The auth config file's users are listed (source `config`,
 * no id) but changed only in the file.
 */
export const userRoutes: FastifyPluginAsync<{ access: AccessControl; responses: ResponseStore }> = async (fastify, { access, responses }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const tags = ['admin'];
  const now = (): Date => new Date(access.now());

  app.post('/v1/admin/users', { ...needs('users:manage'), schema: { body: createUserBody, tags } }, async (request, reply) => {
    refuseRestrictedKey(request);
    const { username, password, permissions } = request.body;
    requireGrantable(request, permissions);
    if (access.authenticator.isConfigUser(username) || access.identities.userByName(username)) throw new HangarError('user_exists', [username], { param: 'username' });
    // With auth off this user turns it on: without admin, nobody could manage anything.
    if (!access.authenticator.enabled && !expandScopes(permissions).has('admin')) throw new HangarError('first_user_not_admin', [], { param: 'permissions' });
    const user = access.identities.createUser({ username, passwordHash: await hashPassword(password), permissions }, now());
    access.audit.record(actorOf(request), 'user.create', `user:${user.id}`, { username, permissions }, now());
    if (!request.principal && access.authenticator.enabled) request.log.warn({ username }, 'the first database user was created: authentication is now on');
    return reply.code(201).send({ id: user.id, username: user.username });
  });

  app.get('/v1/admin/users', { ...needs('users:manage'), schema: { tags } }, async () => [
    ...access.authenticator.configUsers().map((u) => ({ id: null, username: u.username, source: 'config', enabled: true, must_change_password: false, permissions: u.permissions, created_at: null })),
    ...access.identities.listUsers().map(userView),
  ]);

  app.get('/v1/admin/users/:id', { ...needs('users:manage'), schema: { params: idParams, tags } }, async (request) => userView(existing(request.params.id)));

  app.put('/v1/admin/users/:id', { ...needs('users:manage'), schema: { params: idParams, body: updateUserBody, tags } }, async (request) => {
    refuseRestrictedKey(request);
    const user = existing(request.params.id);
    requireNoMoreThanCaller(request, user, 'change');
    if (request.body.permissions !== undefined) requireGrantable(request, request.body.permissions);
    const next = { ...user, ...request.body };
    keepAnAdmin(user.id, next.enabled && expandScopes(next.permissions).has('admin'));
    access.identities.updateUser(user.id, request.body);
    access.audit.record(actorOf(request), 'user.update', `user:${user.id}`, { username: user.username, ...request.body }, now());
    return { ok: true };
  });

  app.delete('/v1/admin/users/:id', { ...needs('users:manage'), schema: { params: idParams, tags } }, async (request) => {
    refuseRestrictedKey(request);
    const user = existing(request.params.id);
    requireNoMoreThanCaller(request, user, 'delete');
    keepAnAdmin(user.id, false);
    const keys = access.identities.listKeys(user.username).filter((k) => k.user_id === user.id);
    access.identities.deleteUser(user.id);
    for (const key of keys) {
      access.limiter.forget(key.id);
      // Their series go with them, as a revoked key's do (until 2026-11-29 they stayed).
      request.server.metrics.keys.forgetKey(key.id);
    }
    // Stored responses belong to a username: a new account of that name must not read them.
    const responsesDeleted = responses.deleteOwner(user.username);
    access.audit.record(actorOf(request), 'user.delete', `user:${user.id}`, { username: user.username, keys_revoked: keys.length, responses_deleted: responsesDeleted }, now());
    return { ok: true };
  });

  app.put('/v1/admin/users/:id/password', { ...needs('users:manage'), schema: { params: idParams, body: passwordBody, tags } }, async (request) => {
    refuseRestrictedKey(request);
    const user = existing(request.params.id);
    requireNoMoreThanCaller(request, user, 'set the password of');
    access.identities.updateUser(user.id, { passwordHash: await hashPassword(request.body.new_password) });
    access.audit.record(actorOf(request), 'user.password', `user:${user.id}`, { username: user.username }, now());
    return { ok: true };
  });

  function existing(id: number): UserRecord {
    const user = access.identities.user(id);
    if (!user) throw new HangarError('user_not_found', [id]);
    return user;
  }

  /** Refuses a change that would leave authentication on with no enabled admin anywhere. */
  function keepAnAdmin(changing: number, stillAdmin: boolean): void {
    if (stillAdmin || access.authenticator.configUsers().some((u) => expandScopes(u.permissions).has('admin'))) return;
    const others = access.identities.listUsers().some((u) => u.id !== changing && u.enabled && expandScopes(u.permissions).has('admin'));
    if (!others) throw new HangarError('invalid_field', ['this change would leave no enabled user with admin; give another user admin first'], { param: 'permissions' });
  }
};

function userView(user: UserRecord): Record<string, unknown> {
  return { id: user.id, username: user.username, source: 'local', enabled: user.enabled, must_change_password: false, permissions: user.permissions, created_at: user.created_at };
}

import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { AccessControl } from '../../auth/access-control.js';
import { needs } from '../auth/route-permission.js';
import { managesAllKeys } from './admin-caller.js';
import { auditQuery, usageQuery } from './schema.js';

/** Usage by key, model and hour, and the audit log (docs/auth.md, "Usage", "Audit log"). */
export const reportRoutes: FastifyPluginAsync<{ access: AccessControl }> = async (fastify, { access }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const tags = ['admin'];

  // Admins (keys:manage) see every key's usage; anyone else only their own keys'.
  app.get('/v1/admin/usage', { ...needs('keys:read'), schema: { querystring: usageQuery, tags } }, async (request) => {
    const { from, to, key_id: keyId, model } = request.query;
    let keyIds: number[] | undefined = keyId === undefined ? undefined : [keyId];
    if (!managesAllKeys(request)) {
      const own = access.identities.listKeys(request.principal!.username).map((k) => k.id);
      keyIds = keyIds === undefined ? own : keyIds.filter((id) => own.includes(id));
    }
    return access.usage.query({ from, to, model, ...(keyIds ? { keyIds } : {}) });
  });

  app.get('/v1/admin/audit', { ...needs('admin'), schema: { querystring: auditQuery, tags } }, async (request) => access.audit.list(request.query));
};

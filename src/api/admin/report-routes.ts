import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { AccessControl } from '../../auth/access-control.js';
import { needs } from '../auth/route-permission.js';
import { managesAllKeys } from './admin-caller.js';
import { stringify } from 'csv-stringify/sync';
import { auditQuery, usageQuery } from './schema.js';

const COUNTS = ['requests', 'prompt_tokens', 'completion_tokens', 'errors'];

/** Usage by key, model and hour, and the audit log (docs/auth.md, "Usage", "Audit log"). */
export const reportRoutes: FastifyPluginAsync<{ access: AccessControl }> = async (fastify, { access }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const tags = ['admin'];

  // Admins (keys:manage) see every key's usage; anyone else only their own keys'.
  app.get('/v1/admin/usage', { ...needs('keys:read'), schema: { querystring: usageQuery, tags } }, async (request, reply) => {
    const { from, to, key_id: keyId, model, group_by: groupBy, bucket, format } = request.query;
    let keyIds: number[] | undefined = keyId === undefined ? undefined : [keyId];
    if (!managesAllKeys(request)) {
      // Revoked keys too: a lost key is revoked and replaced, and what it was used for stays the owner's.
      const own = access.identities.keyIdsEverOwnedBy(request.principal!.username);
      keyIds = keyIds === undefined ? own : keyIds.filter((id) => own.includes(id));
    }
    const query = { from, to, model, ...(keyIds ? { keyIds } : {}) };
    const summed = groupBy !== undefined || bucket !== undefined;
    const rows: object[] = summed ? access.usage.summary(query, groupBy ?? [], bucket ?? 'hour') : access.usage.query(query);
    if (format === 'json') return rows;
    const columns = summed ? ['bucket', ...(['key', 'user', 'model'] as const).filter((g) => groupBy?.includes(g)).map((g) => (g === 'key' ? 'key_id' : g)), ...COUNTS] : ['key_id', 'model', 'hour', ...COUNTS];
    void reply.type('text/csv; charset=utf-8').header('content-disposition', 'attachment; filename="usage.csv"');
    // escape_formulas: a spreadsheet must not run a model or user name as a formula.
    return stringify(rows, { header: true, columns, escape_formulas: true });
  });

  app.get('/v1/admin/audit', { ...needs('admin'), schema: { querystring: auditQuery, tags } }, async (request) => access.audit.list(request.query));
};

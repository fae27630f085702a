import type { FastifyRequest } from 'fastify';
import { allows } from '../../auth/permissions.js';
import { HangarError } from '../../errors/hangar-error.js';

/**
 * The check of `models:code` (docs/auth.md, "Running code"), handed to the registry
 * and the supervisor, which call it with what a registration or launch would run
 * before anything is kept or started. With authentication off everything is allowed,
 * as before. Every allowed code-running action goes to the audit log.
 */
export function codePower(request: FastifyRequest, action: string, target: string): (risks: string[]) => void {
  return (risks) => {
    if (risks.length === 0) return;
    const principal = request.principal;
    if (principal && !allows(principal.scopes, 'models:code')) {
      throw new HangarError('code_power_required', [risks.join('; ')], { headers: { 'www-authenticate': 'Bearer scope="models:code"' } });
    }
    const access = request.server.access;
    access.audit.record(principal?.username ?? '(auth off)', action, target, { risks }, new Date(access.now()));
  };
}

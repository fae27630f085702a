import type { FastifyInstance } from 'fastify';
import type { Authenticator, Principal } from '../../auth/authenticator.js';
import { allows } from '../../auth/permissions.js';
import { isPublicRoute } from '../../auth/public-routes.js';
import { HangarError } from '../../errors/hangar-error.js';
import './route-permission.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

const BEARER = /^Bearer +(\S+) *$/i;

/**
 * The one guard around every route (contract §6), as an onRequest hook so it runs
 * before the body is even read. Public routes are the PUBLIC_ROUTES constant; every
 * other route needs its declared permission, `admin` if it declares none. Unknown
 * paths are guarded too, so the route table cannot be probed without a credential.
 * While authentication is off (no --auth-config and no database user) it lets
 * everything through and credentials are ignored; the first database user turns it
 * on for the next request, without a restart.
 */
export function installAuthGuard(app: FastifyInstance, authenticator: Authenticator): void {
  app.decorateRequest('principal', null);
  app.addHook('onRequest', async (request) => {
    if (!authenticator.enabled) return;
    const url = request.routeOptions.url;
    // HEAD is GET without a body: fastify adds a HEAD route for every GET one.
    const method = request.method === 'HEAD' ? 'GET' : request.method;
    if (url !== undefined && isPublicRoute(method, url)) return;
    const required = request.routeOptions.config.permission ?? 'admin';
    const challenge = { 'www-authenticate': `Bearer scope="${required}"` };
    const match = BEARER.exec(request.headers.authorization ?? '');
    if (!match?.[1]) throw new HangarError('not_authenticated', [], { headers: { 'www-authenticate': 'Bearer' } });
    const principal = await authenticator.authenticate(match[1]);
    if (!principal) throw new HangarError('invalid_credentials', [], { headers: challenge });
    if (!allows(principal.scopes, required)) throw new HangarError('permission_denied', [], { headers: challenge });
    request.principal = principal;
  });
}

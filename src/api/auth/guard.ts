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
  // Callback style, and a key is checked without a promise: this runs on every request,
  // and its cost is what bench/auth-limits.ts measures against auth off.
  app.addHook('onRequest', (request, _reply, done) => {
    if (!authenticator.enabled) return done();
    const url = request.routeOptions.url;
    // HEAD is GET without a body: fastify adds a HEAD route for every GET one.
    const method = request.method === 'HEAD' ? 'GET' : request.method;
    if (url !== undefined && isPublicRoute(method, url)) return done();
    const required = request.routeOptions.config.permission ?? 'admin';
    // Anthropic's SDKs send the key as `x-api-key` (docs/anthropic.md); a bearer header wins.
    const apiKey = request.headers['x-api-key'];
    const credential = BEARER.exec(request.headers.authorization ?? '')?.[1] ?? (typeof apiKey === 'string' && apiKey.length > 0 ? apiKey : undefined);
    if (!credential) return done(new HangarError('not_authenticated', [], { headers: { 'www-authenticate': 'Bearer' } }));
    const admit = (principal: Principal | null): void => {
      const challenge = (): Record<string, string> => ({ 'www-authenticate': `Bearer scope="${required}"` });
      if (!principal) return done(new HangarError('invalid_credentials', [], { headers: challenge() }));
      if (!allows(principal.scopes, required)) return done(new HangarError('permission_denied', [], { headers: challenge() }));
      request.principal = principal;
      done();
    };
    // The socket: a keep-alive connection's key is recognised without hashing it again.
    const outcome = authenticator.authenticate(credential, request.raw.socket);
    if (outcome instanceof Promise) outcome.then(admit, (err: unknown) => done(err as Error));
    else admit(outcome);
  });
}

import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Authenticator, Principal } from '../../auth/authenticator.js';
import { allows, type Permission } from '../../auth/permissions.js';
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
  // What each route's config asks of the guard, worked out once per route (fastify
  // gives every route, and the not-found handler, a config object of its own) instead
  // of on every request.
  const rules = new WeakMap<object, RouteRule>();
  const ruleOf = (config: RouteConfig | undefined): RouteRule => {
    if (!config) return { public: false, permission: 'admin' };
    let rule = rules.get(config);
    if (rule === undefined) rules.set(config, (rule = routeRule(config)));
    return rule;
  };
  // Callback style, and a key is checked without a promise: this runs on every request,
  // and its cost is what bench/auth-limits.ts measures against auth off.
  app.addHook('onRequest', (request, _reply, done) => {
    if (!authenticator.enabled) return done();
    const config = request.routeOptions.config;
    const rule = ruleOf(config);
    // A CORS preflight the plugin takes is answered in its own hook, before this one
    // (cors.ts): an OPTIONS request that gets here is one it did not take (no Origin, an
    // origin not allowed, no Access-Control-Request-Method), which would reach the
    // not-found answer, whose 405 lists the path's methods. Guarded, so the route table
    // cannot be mapped without a credential.
    const notOptions = request.method !== 'OPTIONS';
    if (notOptions && (rule.public ?? isPublicRoute(request.method === 'HEAD' ? 'GET' : request.method, config!.url))) return done();
    const credential = credentialOf(request.headers);
    if (!credential) return done(new HangarError('not_authenticated', [], { headers: { 'www-authenticate': 'Bearer' } }));
    // The socket: a keep-alive connection's key is recognised without hashing it again.
    const outcome = authenticator.authenticate(credential, request.raw.socket);
    if (!(outcome instanceof Promise)) return done(admission(request, outcome, rule.permission));
    outcome.then((principal) => done(admission(request, principal, rule.permission)), (err: unknown) => done(err as Error));
  });
}

type RouteConfig = FastifyRequest['routeOptions']['config'];

interface RouteRule {
  /** Null for a route of several methods (one config for all): looked up per request. */
  public: boolean | null;
  permission: Permission;
}

function routeRule(config: RouteConfig): RouteRule {
  const permission = config.permission ?? 'admin';
  // A request no route matched (its config has no url) is guarded like any other.
  if ((config.url as string | undefined) === undefined) return { public: false, permission };
  if (Array.isArray(config.method)) return { public: null, permission };
  // HEAD is GET without a body: fastify adds a HEAD route for every GET one.
  return { public: isPublicRoute(config.method === 'HEAD' ? 'GET' : config.method, config.url), permission };
}

/** A bearer token, or Anthropic's `x-api-key` (docs/anthropic.md); a bearer header wins. */
function credentialOf(headers: FastifyRequest['headers']): string | undefined {
  const authorization = headers.authorization;
  if (authorization !== undefined) {
    const bearer = BEARER.exec(authorization)?.[1];
    if (bearer !== undefined) return bearer;
  }
  const apiKey = headers['x-api-key'];
  return typeof apiKey === 'string' && apiKey.length > 0 ? apiKey : undefined;
}

/** Undefined when the principal may use the route (and is now the request's), else the error to answer. */
function admission(request: FastifyRequest, principal: Principal | null, required: Permission): HangarError | undefined {
  if (principal && allows(principal.scopes, required)) {
    request.principal = principal;
    return undefined;
  }
  const headers = { 'www-authenticate': `Bearer scope="${required}"` };
  return new HangarError(principal ? 'permission_denied' : 'invalid_credentials', [], { headers });
}

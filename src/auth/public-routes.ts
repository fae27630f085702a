/**
 * The routes that answer without a credential when auth is on (contract §5), as
 * `METHOD /path` in the router's own spelling. Every other route is guarded; a test
 * walks the live route table against this list.
 */
export const PUBLIC_ROUTES: ReadonlySet<string> = new Set([
  'GET /status',
  'GET /v1/cluster/auth',
  'POST /token',
  // The web UI's static files (src/api/web-ui/routes.ts): the login page has to load
  // before there is a credential. They hold no data; the API calls they make are guarded.
  'GET /',
  'GET /ui',
  'GET /ui/*',
  'GET /assets/*',
  // CORS preflights (src/api/cors.ts): answered before the guard, and a browser sends
  // them without a credential. Only a preflight (it carries Access-Control-Request-Method)
  // passes as public: any other OPTIONS request is guarded like an unknown path
  // (src/api/auth/guard.ts), since the plugin hands it to the not-found answer, whose
  // 405 lists the methods a path takes.
  'OPTIONS *',
]);

export function isPublicRoute(method: string, url: string): boolean {
  return PUBLIC_ROUTES.has(`${method} ${url}`);
}

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
  // CORS preflights (src/api/cors.ts): the plugin answers them in its own hook, before
  // the guard, and a browser sends them without a credential. Any OPTIONS request the
  // plugin does not answer is guarded like an unknown path (src/api/auth/guard.ts),
  // since the plugin hands it to the not-found answer, whose 405 lists a path's methods.
  'OPTIONS *',
]);

export function isPublicRoute(method: string, url: string): boolean {
  return PUBLIC_ROUTES.has(`${method} ${url}`);
}

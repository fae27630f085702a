import { CliError } from './cli-error.js';
import { loadToken, normalizeEndpoint } from './token-store.js';

export const DEFAULT_ENDPOINT = 'http://127.0.0.1:9997';

/** The options every client command takes (Xinference's `-e` and `-ak`). */
export interface ConnectionOptions {
  endpoint?: string;
  apiKey?: string;
  debug?: boolean;
}

export interface Connection {
  endpoint: string;
  /** What goes after `Bearer`; null sends no Authorization header. */
  credential: string | null;
}

/**
 * `-e/--endpoint`, else `HANGAR_ENDPOINT`, else `XINFERENCE_ENDPOINT` (what Xinference's
 * CLI reads, so a shell set up for it keeps working), else the default; `-ak/--api-key`,
 * else `HANGAR_API_KEY`, else the saved login token.
 */
export async function resolveConnection(options: ConnectionOptions, env: NodeJS.ProcessEnv = process.env): Promise<Connection> {
  const endpoint = normalizeEndpoint(options.endpoint ?? (env.HANGAR_ENDPOINT || env.XINFERENCE_ENDPOINT || DEFAULT_ENDPOINT));
  checkEndpoint(endpoint);
  // Trimmed as fetch trims a header value: a key read from a file or a secret often ends in a newline.
  const credential = (options.apiKey ?? (env.HANGAR_API_KEY || (await loadToken(endpoint))))?.trim() || null;
  // A key with a line break or another control character cannot be a header; fetch's
  // refusal quoted it whole in the "cannot reach" line (and logs keep stderr).
  if (credential && /[\u0000-\u001f\u007f]/.test(credential)) {
    throw new CliError('the API key or token holds a line break or another control character; check --api-key, HANGAR_API_KEY or the saved login');
  }
  return { endpoint, credential: credential ?? null };
}

/**
 * A server's address and nothing else: a user and password in it would be printed in
 * every "cannot reach" line (fetch refuses them anyway), and a query or fragment sent
 * every request to the web UI's page, answered as "not JSON".
 */
function checkEndpoint(endpoint: string): void {
  if (!URL.canParse(endpoint)) return; // named by the request's own check: "not an http:// or https:// URL"
  const url = new URL(endpoint);
  if (url.username || url.password) {
    throw new CliError(`the endpoint holds a user name or password (${url.protocol}//…@${url.host}); give the server's address alone, and the credential with --api-key or \`hangar login\``);
  }
  if (url.search || url.hash) {
    throw new CliError(`the endpoint ${url.origin}${url.pathname} has a query or fragment (${url.search ? '?…' : '#…'}); give the server's address alone, like http://127.0.0.1:9997`);
  }
}

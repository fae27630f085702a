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
  const credential = options.apiKey ?? (env.HANGAR_API_KEY || (await loadToken(endpoint)));
  return { endpoint, credential: credential ?? null };
}

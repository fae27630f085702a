import { createHash } from 'node:crypto';
import { chmod, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { defaultHome } from '../config/config.js';
import { makePrivateDirectory } from '../storage/private-directory.js';

/**
 * Tokens saved by `hangar login`, one file per endpoint, as Xinference keeps them
 * (`<home>/auth/<sha256(endpoint)>`): `<HANGAR_HOME or ~/.hangar>/auth/<sha256>.json`,
 * mode 0600 in a 0700 folder, since a token is as good as the password.
 */
export function tokenFile(endpoint: string, env: NodeJS.ProcessEnv = process.env): string {
  const digest = createHash('sha256').update(normalizeEndpoint(endpoint)).digest('hex');
  return path.join(defaultHome(env), 'auth', `${digest}.json`);
}

/**
 * `http://h:1/`, `http://h:1` and `HTTP://H:1` are the same server (a token saved for one
 * was not found for another: "not authenticated"). An endpoint the connection refuses
 * (credentials, a query, not http) is left as given, for that refusal to name it.
 */
export function normalizeEndpoint(endpoint: string): string {
  const trimmed = endpoint.replace(/\/+$/, '');
  if (!URL.canParse(trimmed)) return trimmed;
  const url = new URL(trimmed);
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password || url.search || url.hash) return trimmed;
  return (url.origin + url.pathname).replace(/\/+$/, '');
}

export async function saveToken(endpoint: string, token: string): Promise<string> {
  const file = tokenFile(endpoint);
  await makePrivateDirectory(path.dirname(file));
  // Written under a temporary name with 0600 from the start, then renamed: the token
  // is never readable by others, and never half-written.
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify({ endpoint: normalizeEndpoint(endpoint), access_token: token }), { mode: 0o600 });
  await chmod(tmp, 0o600);
  await rename(tmp, file);
  return file;
}

export async function loadToken(endpoint: string): Promise<string | null> {
  try {
    const saved = JSON.parse(await readFile(tokenFile(endpoint), 'utf8')) as { access_token?: unknown };
    return typeof saved.access_token === 'string' ? saved.access_token : null;
  } catch {
    return null;
  }
}

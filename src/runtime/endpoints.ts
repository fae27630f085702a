import { randomBytes } from 'node:crypto';
import path from 'node:path';

/**
 * Unix socket paths are limited to about 107 bytes (sun_path). The socket files get a
 * short random name in a folder chosen so that they fit (run-directory.ts).
 */
export const MAX_IPC_PATH = 100;
/** `<12 hex>.data`: the longest name allocateEndpoints gives a socket file. */
export const SOCKET_NAME_LENGTH = 17;

export interface EndpointPair {
  data: string;
  control: string;
  /** Files to remove when the sockets close. */
  files: string[];
}

export function allocateEndpoints(runDir: string): EndpointPair {
  const base = path.join(runDir, randomBytes(6).toString('hex'));
  if (base.length + 5 > MAX_IPC_PATH) throw new Error(`the runtime socket folder ${runDir} is too long for a Unix socket path`);
  return { data: `ipc://${base}.data`, control: `ipc://${base}.ctl`, files: [`${base}.data`, `${base}.ctl`] };
}

import { randomBytes } from 'node:crypto';
import path from 'node:path';

/**
 * Unix socket paths are limited to about 107 bytes (sun_path). A home folder deep
 * in a temp dir plus a 100-character uid would not fit, so the socket files get a
 * short random name, and when even that is too long we fall back to loopback TCP
 * with a port the kernel picks.
 */
const MAX_IPC_PATH = 100;

export interface EndpointPair {
  data: string;
  control: string;
  /** Files to remove when the sockets close (empty for TCP). */
  files: string[];
}

export function allocateEndpoints(runDir: string): EndpointPair {
  const base = path.join(runDir, randomBytes(6).toString('hex'));
  if (base.length + 5 <= MAX_IPC_PATH) {
    return { data: `ipc://${base}.data`, control: `ipc://${base}.ctl`, files: [`${base}.data`, `${base}.ctl`] };
  }
  return { data: 'tcp://127.0.0.1:*', control: 'tcp://127.0.0.1:*', files: [] };
}

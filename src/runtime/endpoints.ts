import { randomBytes } from 'node:crypto';
import path from 'node:path';

/**
 * Unix socket paths are limited to about 107 bytes (sun_path). The socket files get a
 * short random name in a folder chosen so that they fit (run-directory.ts).
 */
export const MAX_IPC_PATH = 100;
/** `<12 hex>/s.sock` (an engine's socket, engineSocketOf): the longest path below the run folder that a socket file gets. */
export const SOCKET_NAME_LENGTH = 19;

export interface EndpointPair {
  data: string;
  control: string;
  /** Files (and the engine's socket folder, engineSocketOf) to remove when the sockets close. */
  files: string[];
}

export function allocateEndpoints(runDir: string): EndpointPair {
  const base = path.join(runDir, randomBytes(6).toString('hex'));
  if (engineSocket(base).length > MAX_IPC_PATH) throw new Error(`the runtime socket folder ${runDir} is too long for a Unix socket path`);
  return { data: `ipc://${base}.data`, control: `ipc://${base}.ctl`, files: [`${base}.data`, `${base}.ctl`, path.dirname(engineSocket(base))] };
}

/** In a folder named as its runtime's sockets are, without their suffix; llama-server takes a socket path only by its `.sock` ending. */
function engineSocket(base: string): string {
  return path.join(base, 's.sock');
}

/**
 * Where a runtime may put an engine process's socket (the llama.cpp runtime's
 * llama-server), in a private folder of its own beside the runtime's sockets; null when
 * the runtime's data endpoint is not a local socket file (a runtime on another host
 * makes its own). The folder is among the endpoint's files, so the control plane
 * removes it with them when the runtime ends, a runtime killed before it could clean up
 * included.
 */
export function engineSocketOf(dataEndpoint: string): string | null {
  const match = /^ipc:\/\/(.+)\.data$/.exec(dataEndpoint);
  return match ? engineSocket(match[1]!) : null;
}

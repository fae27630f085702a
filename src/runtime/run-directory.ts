import { createHash } from 'node:crypto';
import { lstat, mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { MAX_IPC_PATH, SOCKET_NAME_LENGTH } from './endpoints.js';

/**
 * Where a local runtime's ipc:// socket files live. A Unix socket path must fit in
 * about 107 bytes (sun_path), so a deep home folder cannot hold them. Loopback TCP
 * would fit any home but lets every local user connect to the runtime's ports; a
 * private folder (0700, ours) outside the home keeps ipc:// and its file permissions
 * for any home path (docs/runtime-protocol.md, "Transport and security").
 */
export interface RunDirectory {
  path: string;
  /** Whether it is a private folder we made outside the home, removed at shutdown. */
  private: boolean;
}

function fits(dir: string): boolean {
  return path.join(dir, 'x'.repeat(SOCKET_NAME_LENGTH)).length <= MAX_IPC_PATH;
}

/** `<home>/run` when its socket paths fit; else a private folder under the temp dir (or /tmp). */
export async function chooseRunDirectory(home: string): Promise<RunDirectory> {
  const inHome = path.join(home, 'run');
  if (fits(inHome)) {
    await mkdir(inHome, { recursive: true, mode: 0o700 });
    return { path: inHome, private: false };
  }
  const base = [os.tmpdir(), '/tmp'].find((dir) => fits(path.join(dir, 'hangar-4294967295-0123456789ab')));
  if (!base) throw new Error(`no folder short enough for the runtime sockets: ${inHome} and the temp folder are too long`);
  // One name per (user, home), so a restarted service reuses its folder instead of
  // leaving one behind per start; taken only when it is surely ours and private.
  const tag = createHash('sha256').update(path.resolve(home)).digest('hex').slice(0, 12);
  const uid = process.getuid?.() ?? 0;
  const named = path.join(base, `hangar-${uid}-${tag}`);
  try {
    await mkdir(named, { mode: 0o700 });
    return { path: named, private: true };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const found = await lstat(named);
  if (found.isDirectory() && found.uid === uid && (found.mode & 0o077) === 0) return { path: named, private: true };
  // Someone else made that name (or opened it up): a fresh folder of our own instead.
  return { path: await mkdtemp(path.join(base, `hangar-${uid}-`)), private: true };
}

export async function removeRunDirectory(dir: RunDirectory): Promise<void> {
  if (dir.private) await rm(dir.path, { recursive: true, force: true });
}

import { createHash } from 'node:crypto';
import { lstat, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import net from 'node:net';
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
    await clearStaleSockets(inHome);
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
  if (found.isDirectory() && found.uid === uid && (found.mode & 0o077) === 0) {
    await clearStaleSockets(named);
    return { path: named, private: true };
  }
  // Someone else made that name (or opened it up): a fresh folder of our own instead.
  return { path: await mkdtemp(path.join(base, `hangar-${uid}-`)), private: true };
}

export async function removeRunDirectory(dir: RunDirectory): Promise<void> {
  if (dir.private) await rm(dir.path, { recursive: true, force: true });
}

/**
 * The socket files (and engine socket folders) of runtimes that are gone: a control
 * plane killed with SIGKILL, or a crashed host, could not remove them, and they stayed
 * through every later start. A runtime's files go when nothing answers on its data
 * socket any more; a live one's (a second service wrongly started on the same home)
 * are left alone.
 */
export async function clearStaleSockets(dir: string): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const bases = new Set(names.map((name) => /^([0-9a-f]{12})(\.data|\.ctl)?$/.exec(name)?.[1]).filter((base): base is string => base !== undefined));
  await Promise.all([...bases].map(async (base) => {
    const stem = path.join(dir, base);
    if (await answers(`${stem}.data`)) return;
    await Promise.all([`${stem}.data`, `${stem}.ctl`, stem].map((file) => rm(file, { recursive: true, force: true })));
  }));
}

/** Whether a process listens on the Unix socket (a refused or missing one does not). */
function answers(socket: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.connect({ path: socket });
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
}

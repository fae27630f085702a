import { randomBytes } from 'node:crypto';
import { lstat, mkdir, open, readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';

/**
 * Writes a file atomically: a temp file in the same folder (same file system, so the
 * rename is atomic), fsync, rename over the target, fsync the folder. Readers — and a
 * process killed at any moment — see the old file or the new one, never half of one.
 * On failure the temp file is removed and the error is thrown as is.
 *
 * The temp name starts with a dot and does not end in the target's extension, so a
 * folder scan for `*.json` never picks it up.
 */
export async function writeFileAtomic(target: string, content: string, mode = 0o600): Promise<void> {
  const folder = path.dirname(target);
  const temp = path.join(folder, `.${path.basename(target)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    await mkdir(folder, { recursive: true, mode: 0o700 });
    // The mode is set at creation, so a secret is never readable by others, not even briefly.
    const handle = await open(temp, 'wx', mode);
    try {
      await handle.writeFile(content, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, target);
  } catch (err) {
    await rm(temp, { force: true }).catch(() => undefined);
    throw err;
  }
  await syncFolder(folder);
}

/** So the rename survives a power cut; some file systems refuse to fsync a folder, which costs only that guarantee. */
async function syncFolder(folder: string): Promise<void> {
  try {
    const handle = await open(folder, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // best effort, see above
  }
}

/** A temp file whose writer is gone. */
const TEMP_NAME = /^\..+\.(\d+)\.[0-9a-f]{12}\.tmp$/;
/** Older than this, a temp file is stale even if its writer's pid is in use again. */
const STALE_AFTER_MS = 10 * 60_000;

/**
 * Removes the temp files of writes that never finished (a process killed between open
 * and rename) from `folder`: those whose writer process is gone, or that are older
 * than any write takes. Returns the names removed. A missing folder has none.
 */
export async function sweepStaleTemps(folder: string, now = Date.now()): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(folder);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const match = TEMP_NAME.exec(name);
    if (!match) continue;
    const file = path.join(folder, name);
    try {
      const info = await lstat(file);
      if (!info.isFile()) continue;
      const pid = Number(match[1]);
      const writerGone = pid !== process.pid && !processExists(pid);
      if (!writerGone && now - info.mtimeMs < STALE_AFTER_MS) continue;
      await rm(file, { force: true });
      removed.push(name);
    } catch {
      // gone meanwhile, or not ours to remove: nothing to sweep
    }
  }
  return removed;
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, it is just not ours.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

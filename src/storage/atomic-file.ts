import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm } from 'node:fs/promises';
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

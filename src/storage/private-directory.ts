import { mkdir } from 'node:fs/promises';
import path from 'node:path';

/**
 * Creates `dir` and any missing parents (mode 0700 for those it makes), as
 * `mkdir -p` does. Node's own `mkdir(dir, { recursive: true })` never returns for a
 * path under /proc that does not exist (it retries the ENOENT forever, Node 20), so
 * `HANGAR_HOME=/proc/x` hung `hangar start` and `hangar login` without a word; this
 * walks up one parent at a time and fails with the system's error instead.
 */
export async function makePrivateDirectory(dir: string): Promise<void> {
  try {
    await mkdir(dir, { mode: 0o700 });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return;
    const parent = path.dirname(dir);
    if (code !== 'ENOENT' || parent === dir) throw err;
    await makePrivateDirectory(parent);
    try {
      await mkdir(dir, { mode: 0o700 });
    } catch (again) {
      if ((again as NodeJS.ErrnoException).code !== 'EEXIST') throw again;
    }
  }
}

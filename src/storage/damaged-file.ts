import { constants } from 'node:fs';
import { copyFile } from 'node:fs/promises';

/**
 * Keeps a copy of a state file that does not read whole (cut short, hand-edited into
 * bad JSON, entries of the wrong shape) beside it, as `<file>.damaged-<time>`, before
 * the service's next save writes over it: what it held stays there for a person to
 * recover. Returns the copy's path, or null when no copy could be made.
 */
export async function keepDamagedCopy(file: string, now: Date = new Date()): Promise<string | null> {
  const copy = `${file}.damaged-${now.toISOString().replace(/[:.]/g, '-')}`;
  try {
    await copyFile(file, copy, constants.COPYFILE_EXCL);
    return copy;
  } catch {
    return null;
  }
}

import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

/**
 * Opens a file to read only if it is a regular one. A model folder is anyone's
 * `model_path`: a named pipe at a config or weight file's name blocked a libuv worker in
 * open() until someone wrote to it, so the launch, its cancel and its terminate hung,
 * and four of them took the whole pool. O_NONBLOCK makes a pipe's open return at once,
 * and the handle checked is the file that was opened, not one a name pointed to a
 * moment before. Null: absent, unreadable, or not a regular file.
 */
export async function openRegular(file: string): Promise<FileHandle | null> {
  const handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK).catch(() => null);
  if (!handle) return null;
  if ((await handle.stat().catch(() => null))?.isFile()) return handle;
  await handle.close();
  return null;
}

/** A regular file's text, or null when it is none or larger than `maxBytes` (a config that large is not one). */
export async function readRegularText(file: string, maxBytes = 16 * 1024 * 1024): Promise<string | null> {
  const handle = await openRegular(file);
  if (!handle) return null;
  try {
    if ((await handle.stat()).size > maxBytes) return null;
    return await handle.readFile('utf8');
  } catch {
    return null;
  } finally {
    await handle.close();
  }
}

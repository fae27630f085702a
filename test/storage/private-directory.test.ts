import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makePrivateDirectory } from '../../src/storage/private-directory.js';

describe('makePrivateDirectory', () => {
  it('makes the folder and its missing parents with mode 0700, and accepts one that is there', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'hangar-dir-'));
    try {
      const dir = path.join(root, 'a', 'b', 'c');
      await makePrivateDirectory(dir);
      await makePrivateDirectory(dir);
      for (const made of [path.join(root, 'a'), dir]) expect((await stat(made)).mode & 0o777).toBe(0o700);
      // A file where a folder should be is the system's error, as mkdir -p says it.
      await writeFile(path.join(root, 'f'), '');
      await expect(makePrivateDirectory(path.join(root, 'f', 'x'))).rejects.toMatchObject({ code: 'ENOTDIR' });
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('fails, instead of hanging as Node\'s recursive mkdir does, under /proc', async () => {
    // Node 20's mkdir(..., { recursive: true }) retries ENOENT there forever.
    await expect(makePrivateDirectory('/proc/hangar-no-such/auth')).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

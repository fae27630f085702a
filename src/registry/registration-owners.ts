import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from '../storage/atomic-file.js';
import type { ModelType } from './model-type.js';
import type { RegistryLogger } from './registry-logger.js';

/**
 * Who registered each custom model, so that only they (or an admin) may remove, and
 * so replace, it. Kept beside the registration folders in `<home>/model/v2/.owners.json`
 * and not in the registration files, which stay in Xinference's format. A model
 * registered with authentication off, or before owners were kept, has none: only an
 * admin may remove it once authentication is on.
 */
export class RegistrationOwners {
  private owners = new Map<string, string>();
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly home: string,
    private readonly logger: RegistryLogger,
  ) {}

  private get file(): string {
    return path.join(this.home, 'model', 'v2', '.owners.json');
  }

  async load(): Promise<void> {
    try {
      const parsed = JSON.parse(await readFile(this.file, 'utf8')) as unknown;
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
      this.owners = new Map(Object.entries(parsed).filter((e): e is [string, string] => typeof e[1] === 'string'));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.logger.warn({ file: this.file, err }, `Ignoring the registration owners in ${this.file}: ${(err as Error).message}`);
    }
  }

  /** Forgets the owners of names that no longer exist (a registration kept in memory only, before a restart). */
  async keepOnly(exists: (type: ModelType, name: string) => boolean): Promise<void> {
    let changed = false;
    for (const key of [...this.owners.keys()]) {
      const slash = key.indexOf('/');
      if (!exists(key.slice(0, slash) as ModelType, key.slice(slash + 1))) {
        this.owners.delete(key);
        changed = true;
      }
    }
    if (changed) await this.write();
  }

  owner(type: ModelType, name: string): string | null {
    return this.owners.get(`${type}/${name}`) ?? null;
  }

  /** Records (or, with null, forgets) the owner; written in order, in the background of the registration's own write. */
  set(type: ModelType, name: string, owner: string | null): Promise<void> {
    const key = `${type}/${name}`;
    if ((this.owners.get(key) ?? null) === owner) return this.writing;
    if (owner === null) this.owners.delete(key);
    else this.owners.set(key, owner);
    return this.write();
  }

  private write(): Promise<void> {
    const content = `${JSON.stringify(Object.fromEntries(this.owners), null, 2)}\n`;
    this.writing = this.writing.then(() =>
      writeFileAtomic(this.file, content).catch((err: unknown) => this.logger.warn({ file: this.file, err }, 'could not save the registration owners')),
    );
    return this.writing;
  }
}

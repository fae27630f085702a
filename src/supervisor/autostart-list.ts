import { readFile } from 'node:fs/promises';
import type { Logger } from '../logging/logger.js';
import { writeFileAtomic } from '../storage/atomic-file.js';
import type { LaunchRequest } from './launch-request.js';
import type { StoredInstance } from './instance-store.js';

interface AutostartFile {
  version: 1;
  models: StoredInstance[];
}

/**
 * `<home>/state/autostart.json` (docs/requests.md, "Autostart"): models launched at
 * every start, beside the restore of what was running. Keyed by uid (the launch's
 * `model_uid`, else its name). Written atomically, 0600: launch `envs` may hold tokens.
 */
export class AutostartList {
  private entries = new Map<string, LaunchRequest>();
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly file: string,
    private readonly logger: Logger,
  ) {}

  async load(): Promise<void> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.logger.warn({ err, file: this.file }, 'cannot read the autostart list');
      return;
    }
    try {
      const state = JSON.parse(text) as AutostartFile;
      if (state.version !== 1 || !Array.isArray(state.models)) throw new Error('unknown format');
      this.entries = new Map(state.models.filter((m) => typeof m?.uid === 'string' && typeof m.request?.model_name === 'string').map((m) => [m.uid, m.request]));
    } catch (err) {
      this.logger.warn({ err, file: this.file }, `ignoring the autostart list in ${this.file}: ${(err as Error).message}`);
    }
  }

  list(): StoredInstance[] {
    return [...this.entries].map(([uid, request]) => ({ uid, request }));
  }

  has(uid: string): boolean {
    return this.entries.has(uid);
  }

  async put(uid: string, request: LaunchRequest): Promise<void> {
    this.entries.set(uid, request);
    await this.save();
  }

  async remove(uid: string): Promise<boolean> {
    if (!this.entries.delete(uid)) return false;
    await this.save();
    return true;
  }

  /** One write at a time, in order; a failed write throws to the caller (the change was not kept). */
  private save(): Promise<void> {
    const content = `${JSON.stringify({ version: 1, models: this.list() } satisfies AutostartFile, null, 2)}\n`;
    this.writing = this.writing.catch(() => {}).then(() => writeFileAtomic(this.file, content, 0o600));
    return this.writing;
  }
}

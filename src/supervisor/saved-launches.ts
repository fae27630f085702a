import { readFile } from 'node:fs/promises';
import type { Logger } from '../logging/logger.js';
import { writeFileAtomic } from '../storage/atomic-file.js';
import { keepDamagedCopy } from '../storage/damaged-file.js';
import type { LaunchRequest } from './launch-request.js';
import type { StoredInstance } from './instance-store.js';

interface SavedLaunchesFile {
  version: 1;
  models: StoredInstance[];
}

/**
 * A list of launches kept in the home, keyed by uid (the launch's `model_uid`, else
 * its name): `state/autostart.json`, models launched at every start (docs/requests.md,
 * "Autostart"), and `state/on-demand.json`, models loaded when a request names them
 * (docs/on-demand.md). Written atomically, 0600: launch `envs` may hold tokens.
 */
export class SavedLaunches {
  private entries = new Map<string, LaunchRequest>();
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly file: string,
    private readonly logger: Logger,
    /** What the list is, in log lines: `autostart list`, `on-demand list`. */
    private readonly label = 'autostart list',
  ) {}

  async load(): Promise<void> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.logger.warn({ err, file: this.file }, `cannot read the ${this.label}`);
      return;
    }
    try {
      const state = JSON.parse(text) as SavedLaunchesFile;
      if (state.version !== 1 || !Array.isArray(state.models)) throw new Error('unknown format');
      const kept = state.models.filter((m) => typeof m?.uid === 'string' && typeof m.request?.model_name === 'string');
      this.entries = new Map(kept.map((m) => [m.uid, m.request]));
      if (kept.length < state.models.length) {
        const copy = await keepDamagedCopy(this.file);
        this.logger.warn({ file: this.file, copy }, `skipping ${state.models.length - kept.length} entr(ies) of the ${this.label} of a shape this version does not read; the file as it was is kept as ${copy ?? '(no copy could be made)'}`);
        await this.replaceKept(copy);
      }
    } catch (err) {
      // The next change writes over the file: keep what it held for a person to recover.
      const copy = await keepDamagedCopy(this.file);
      this.logger.warn({ err, file: this.file, copy }, `ignoring the ${this.label} in ${this.file}: ${(err as Error).message}; the file as it was is kept as ${copy ?? '(no copy could be made)'}`);
      await this.replaceKept(copy);
    }
  }

  /**
   * Once its copy is kept, the file becomes what was read of it: left as it was, every
   * start copied it aside again (and warned again), a copy per start.
   */
  private async replaceKept(copy: string | null): Promise<void> {
    if (copy === null) return;
    await this.save().catch((err: unknown) => this.logger.warn({ err, file: this.file }, `could not rewrite the ${this.label}`));
  }

  list(): StoredInstance[] {
    return [...this.entries].map(([uid, request]) => ({ uid, request }));
  }

  get(uid: string): LaunchRequest | undefined {
    return this.entries.get(uid);
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
    const content = `${JSON.stringify({ version: 1, models: this.list() } satisfies SavedLaunchesFile, null, 2)}\n`;
    this.writing = this.writing.catch(() => {}).then(() => writeFileAtomic(this.file, content, 0o600));
    return this.writing;
  }
}

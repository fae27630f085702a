import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../logging/logger.js';
import { sweepStaleTemps, writeFileAtomic } from '../storage/atomic-file.js';
import { keepDamagedCopy } from '../storage/damaged-file.js';
import type { LaunchRequest } from './launch-request.js';

/** One model that should be running: its uid and how it was launched. */
export interface StoredInstance {
  uid: string;
  request: LaunchRequest;
}

interface StateFile {
  version: 1;
  instances: StoredInstance[];
}

/**
 * `<home>/state/instances.json`: what should be running, so a restarted control
 * plane brings its models back. Written atomically after every change, one write at a
 * time and in order, so the file is always one complete, recent snapshot.
 */
export class InstanceStore {
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly file: string,
    private readonly logger: Logger,
  ) {}

  save(instances: StoredInstance[]): Promise<void> {
    const content = `${JSON.stringify({ version: 1, instances } satisfies StateFile, null, 2)}\n`;
    this.writing = this.writing.then(() =>
      writeFileAtomic(this.file, content).catch((err: unknown) => {
        this.logger.error({ err, file: this.file }, 'could not save the running models; they will not be restored after a restart');
      }),
    );
    return this.writing;
  }

  /** The snapshot, or nothing (with a warning) when the file is missing or unreadable. */
  async load(): Promise<StoredInstance[]> {
    const swept = await sweepStaleTemps(path.dirname(this.file));
    if (swept.length > 0) this.logger.warn({ files: swept }, 'removed temporary files left by an interrupted save of the running models');
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.logger.warn({ err, file: this.file }, 'cannot read the saved running models');
      return [];
    }
    try {
      const state = JSON.parse(text) as StateFile;
      if (state.version !== 1 || !Array.isArray(state.instances)) throw new Error('unknown format');
      const kept = state.instances.filter((i) => typeof i?.uid === 'string' && i.request && typeof i.request.model_name === 'string');
      if (kept.length < state.instances.length) {
        const copy = await keepDamagedCopy(this.file);
        this.logger.warn({ file: this.file, copy }, `skipping ${state.instances.length - kept.length} saved running model(s) of a shape this version does not read in ${this.file}; the file as it was is kept as ${copy ?? '(no copy could be made)'}`);
      }
      return kept;
    } catch (err) {
      // The next save writes over the file: keep what it held for a person to recover.
      const copy = await keepDamagedCopy(this.file);
      this.logger.warn({ err, file: this.file, copy }, `ignoring the saved running models in ${this.file}: ${(err as Error).message}; the file as it was is kept as ${copy ?? '(no copy could be made)'}`);
      return [];
    }
  }
}

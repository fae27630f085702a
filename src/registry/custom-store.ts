import { access, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { HangarError } from '../errors/hangar-error.js';
import { sweepStaleTemps, writeFileAtomic } from '../storage/atomic-file.js';
import { MODEL_TYPES, registryFolder, type ModelType } from './model-type.js';
import { readRegularText } from './regular-file.js';
import type { RegistryLogger } from './registry-logger.js';

/** One persisted definition as read from disk, not yet validated. */
export interface StoredDefinition {
  type: ModelType;
  file: string;
  definition: unknown;
}

/**
 * Persisted custom registrations: one JSON file per model at
 * `<home>/model/v2/<llm|embedding|...>/<model_name>.json`, Xinference's layout
 * (notes §8.3), so a folder copied from Xinference loads here.
 */
export class CustomStore {
  constructor(
    private readonly home: string,
    private readonly logger: RegistryLogger,
  ) {}

  folder(type: ModelType): string {
    return path.join(this.home, 'model', 'v2', registryFolder(type));
  }

  file(type: ModelType, name: string): string {
    return path.join(this.folder(type), `${name}.json`);
  }

  /** Writes atomically (see writeFileAtomic); on failure nothing is left and the error is `registration_persist_failed`. */
  async save(type: ModelType, name: string, definition: unknown): Promise<void> {
    try {
      await writeFileAtomic(this.file(type, name), `${JSON.stringify(definition, null, 2)}\n`);
    } catch (err) {
      throw persistFailed(name, err);
    }
  }

  /** Whether the definition has its file (registered with `persist`). */
  async has(type: ModelType, name: string): Promise<boolean> {
    return access(this.file(type, name)).then(() => true, () => false);
  }

  /** Removes the file; a file that is not there is already removed. */
  async remove(type: ModelType, name: string): Promise<void> {
    try {
      await rm(this.file(type, name), { force: true });
    } catch (err) {
      throw persistFailed(name, err);
    }
  }

  /**
   * Reads every `*.json` file of every type. A file that cannot be read or is not
   * JSON is a warning naming it, never a failure: one bad file must not keep the
   * service, or the user's other models, from starting (contract §2).
   */
  async loadAll(): Promise<StoredDefinition[]> {
    const stored: StoredDefinition[] = [];
    for (const type of MODEL_TYPES) {
      const folder = this.folder(type);
      const swept = await sweepStaleTemps(folder);
      if (swept.length > 0) this.logger.warn({ folder, files: swept }, `Removed ${swept.length} temporary file(s) left by an interrupted registration in ${folder}`);
      let names: string[];
      try {
        names = await readdir(folder);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code !== 'ENOENT') this.logger.warn({ folder, err }, `Cannot read the custom model folder ${folder}; its models are not loaded`);
        continue;
      }
      for (const name of names.filter((n) => n.endsWith('.json') && !n.startsWith('.')).sort()) {
        const file = path.join(folder, name);
        try {
          // Only a regular file: a named pipe here held the start until someone wrote to it.
          const text = await readRegularText(file);
          if (text === null) throw new Error('it is not a regular file that can be read (or is over 16 MiB)');
          stored.push({ type, file, definition: JSON.parse(text) });
        } catch (err) {
          this.logger.warn({ file, err }, `Skipping custom model file ${file}: ${(err as Error).message}`);
        }
      }
    }
    return stored;
  }
}

function persistFailed(name: string, err: unknown): HangarError {
  return new HangarError('registration_persist_failed', [name, (err as Error).message], { cause: err });
}

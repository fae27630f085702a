import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { HangarError } from '../../src/errors/hangar-error.js';
import type { ErrorCode } from '../../src/errors/catalog.js';
import type { EnvironmentFacts } from '../../src/registry/environment-facts.js';
import { Registry } from '../../src/registry/registry.js';

/** A logger that keeps what it is told, so tests can assert on warnings. */
export class RecordingLogger {
  readonly warnings: Array<{ obj: object; msg: string }> = [];
  readonly infos: Array<{ obj: object; msg: string }> = [];
  warn(obj: object, msg: string): void {
    this.warnings.push({ obj, msg });
  }
  info(obj: object, msg: string): void {
    this.infos.push({ obj, msg });
  }
}

export function environment(modules: string[] = [], executables: string[] = [], gpuCount = 0, nodeModules: string[] = []): EnvironmentFacts {
  return { pythonModules: new Set(modules), executables: new Set(executables), nodeModules: new Set(nodeModules), gpuCount };
}

/** Everything this service can run on a CPU machine set up as CI sets it up. */
export const CPU_ENV = environment(
  ['torch', 'transformers', 'sentence_transformers', 'sklearn', 'joblib', 'pocketsphinx', 'soundfile', 'PIL'],
  ['espeak-ng', 'tesseract'],
  0,
  ['node-llama-cpp'],
);

export async function tempHome(): Promise<{ home: string; cleanup: () => Promise<void> }> {
  const home = await mkdtemp(path.join(os.tmpdir(), 'hangar-registry-'));
  return { home, cleanup: () => rm(home, { recursive: true, force: true }) };
}

export async function openRegistry(home: string, env: EnvironmentFacts = CPU_ENV, logger = new RecordingLogger()) {
  const registry = await Registry.open({ home, env, logger });
  return { registry, logger };
}

/** A registry in a temporary home for a test file: opened before its tests, removed after them. */
export function useTempRegistry(): () => Registry {
  let registry: Registry | undefined;
  let cleanup = async (): Promise<void> => {};
  beforeAll(async () => {
    const temp = await tempHome();
    cleanup = temp.cleanup;
    ({ registry } = await openRegistry(temp.home));
  });
  afterAll(() => cleanup());
  return () => registry!;
}

/** Runs `action`, expects a HangarError with `code`, and returns it for more checks. */
export async function expectHangarError(action: () => unknown, code: ErrorCode, status: number): Promise<HangarError> {
  let caught: unknown;
  try {
    await action();
  } catch (err) {
    caught = err;
  }
  expect(caught, `expected ${code}`).toBeInstanceOf(HangarError);
  const err = caught as HangarError;
  expect(err.code).toBe(code);
  expect(err.status).toBe(status);
  return err;
}

import { access, constants } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';

/** What the machine and the runtime's Python environment can do; decides which engines are usable. */
export interface EnvironmentFacts {
  pythonModules: ReadonlySet<string>;
  executables: ReadonlySet<string>;
  nodeModules: ReadonlySet<string>;
  gpuCount: number;
}

/**
 * Asks the runtime's interpreter which of `modules` it can import (find_spec only, so
 * nothing heavy like torch is imported), looks `executables` up on PATH, and counts
 * GPUs with nvidia-smi. A missing interpreter means no modules, not a crash: the
 * engine table then says why each engine is unusable.
 */
export async function probeEnvironment(
  python: string,
  modules: readonly string[],
  executables: readonly string[],
  nodeModules: readonly string[] = [],
): Promise<EnvironmentFacts> {
  const [pythonModules, found, gpuCount] = await Promise.all([
    importableModules(python, modules),
    executablesOnPath(executables),
    countGpus(),
  ]);
  return { pythonModules, executables: found, nodeModules: resolvableNodeModules(nodeModules), gpuCount };
}

/** The npm packages of `names` that resolve from here (the Node runtime resolves them from the same tree). */
function resolvableNodeModules(names: readonly string[]): Set<string> {
  const found = new Set<string>();
  for (const name of names) {
    try {
      import.meta.resolve(name);
      found.add(name);
    } catch {
      // not installed
    }
  }
  return found;
}

async function importableModules(python: string, modules: readonly string[]): Promise<Set<string>> {
  const script = [
    'import importlib.util, json, sys',
    'names = json.loads(sys.argv[1])',
    'print(json.dumps([n for n in names if importlib.util.find_spec(n) is not None]))',
  ].join('\n');
  const result = await execa(python, ['-c', script, JSON.stringify(modules)], { reject: false, timeout: 30_000 });
  if (result.exitCode !== 0) return new Set();
  try {
    return new Set(JSON.parse(result.stdout) as string[]);
  } catch {
    return new Set();
  }
}

async function executablesOnPath(names: readonly string[]): Promise<Set<string>> {
  const dirs = (process.env.PATH ?? '').split(path.delimiter).filter(Boolean);
  const found = new Set<string>();
  await Promise.all(
    names.map(async (name) => {
      for (const dir of dirs) {
        try {
          await access(path.join(dir, name), constants.X_OK);
          found.add(name);
          return;
        } catch {
          // not in this folder
        }
      }
    }),
  );
  return found;
}

async function countGpus(): Promise<number> {
  const result = await execa('nvidia-smi', ['-L'], { reject: false, timeout: 10_000 });
  if (result.exitCode !== 0) return 0;
  return result.stdout.split('\n').filter((line) => line.startsWith('GPU ')).length;
}

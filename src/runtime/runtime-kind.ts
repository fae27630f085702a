import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Which program serves a replica: the Python runtime (`python -m hangar_runtime`)
 * for most engines, the Node one (src/llama-runtime/) for an engine whose library
 * lives in npm. Both speak docs/runtime-protocol.md and take the same command line.
 */
export type RuntimeKind = 'python' | 'node';

const NODE_ENGINES: ReadonlySet<string> = new Set(['llama_cpp']);

export function runtimeKindFor(engine: string): RuntimeKind {
  return NODE_ENGINES.has(engine) ? 'node' : 'python';
}

/**
 * The Node runtime's compiled entry: beside this file in dist/ (the built control
 * plane), or, when this file runs from src/ (tests), in the package's dist/, which
 * `npm run setup` builds. `runtimeRoot` is the python-runtime folder, one level below
 * the package root.
 */
export function nodeRuntimeEntry(runtimeRoot: string): string {
  const beside = fileURLToPath(new URL('../llama-runtime/main.js', import.meta.url));
  if (existsSync(beside)) return beside;
  return path.join(runtimeRoot, '..', 'dist', 'llama-runtime', 'main.js');
}

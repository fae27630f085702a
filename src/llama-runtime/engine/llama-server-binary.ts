import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Which engine process serves an LLM replica (docs/decisions.md, "llama.cpp:
 * llama-server as the engine process"): llama.cpp's own server when
 * `HANGAR_LLAMA_ENGINE=server` (opt-in while it is being brought to parity; the
 * default is node-llama-cpp in this process). Its binary: `HANGAR_LLAMA_SERVER`, else
 * the one scripts/build-llama-server.mjs built for this machine. null: the binding.
 */
export function llamaServerBinary(env: NodeJS.ProcessEnv): string | null {
  if ((env.HANGAR_LLAMA_ENGINE ?? '').trim() !== 'server') return null;
  const given = env.HANGAR_LLAMA_SERVER?.trim();
  const binary = given || cachedBuild();
  if (!existsSync(binary)) {
    throw new Error(`HANGAR_LLAMA_ENGINE=server, but there is no llama-server at ${binary}: build it with \`node scripts/build-llama-server.mjs\` (or set HANGAR_LLAMA_SERVER)`);
  }
  return binary;
}

/** The build script's cache path for this machine (it computes it; nothing is built here). */
function cachedBuild(): string {
  // dist/llama-runtime/engine/ (or src/ under tests) -> the package root.
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
  const out = execFileSync(process.execPath, [path.join(root, 'scripts', 'build-llama-server.mjs'), '--print-path'], { encoding: 'utf8', timeout: 30_000 });
  return out.trim().split('\n').pop() ?? '';
}

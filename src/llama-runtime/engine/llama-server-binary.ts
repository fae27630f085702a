import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Which engine process serves an LLM replica, and why (the runtime logs it). */
export interface EngineChoice {
  /** llama-server's path, or null: node-llama-cpp in this process. */
  binary: string | null;
  why: string;
}

/**
 * Which engine process serves an LLM replica (docs/decisions.md, "llama.cpp:
 * llama-server as the engine process"). llama.cpp's own server, the one
 * scripts/build-llama-server.mjs built for this release and variant (`npm run setup`
 * builds the CPU one; the images build theirs), or `HANGAR_LLAMA_SERVER`'s. Where no
 * server was built (no compiler on the host, a CUDA replica on a host that built only
 * the CPU server), node-llama-cpp in this process serves instead, slower but the same
 * answers. `HANGAR_LLAMA_ENGINE`: `server` requires llama-server (an error without
 * it), `binding` always uses node-llama-cpp, unset picks as above.
 */
export function chooseEngine(env: NodeJS.ProcessEnv, gpu: boolean, locate: (gpu: boolean) => string = cachedBuild): EngineChoice {
  const asked = (env.HANGAR_LLAMA_ENGINE ?? '').trim();
  if (asked !== '' && asked !== 'server' && asked !== 'binding') {
    throw new Error(`HANGAR_LLAMA_ENGINE must be "server" or "binding", not ${JSON.stringify(asked)}`);
  }
  if (asked === 'binding') return { binary: null, why: 'HANGAR_LLAMA_ENGINE=binding' };
  const given = env.HANGAR_LLAMA_SERVER?.trim();
  const binary = given || locate(gpu);
  if (existsSync(binary)) return { binary, why: given ? 'HANGAR_LLAMA_SERVER' : 'built by scripts/build-llama-server.mjs' };
  const build = `node scripts/build-llama-server.mjs${gpu ? ' --cuda' : ''}`;
  if (asked === 'server' || given) {
    throw new Error(`${given ? 'HANGAR_LLAMA_SERVER' : 'HANGAR_LLAMA_ENGINE=server'}, but there is no llama-server at ${binary}: build it with \`${build}\``);
  }
  return { binary: null, why: `no llama-server is built at ${binary} (\`${build}\` builds it; node-llama-cpp serves meanwhile)` };
}

/** The build script's cache path for this machine and variant (it computes it; nothing is built here). */
function cachedBuild(gpu: boolean): string {
  // dist/llama-runtime/engine/ (or src/ under tests) -> the package root.
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
  const out = execFileSync(process.execPath, [path.join(root, 'scripts', 'build-llama-server.mjs'), '--print-path', ...(gpu ? ['--cuda'] : [])], { encoding: 'utf8', timeout: 30_000 });
  return out.trim().split('\n').pop() ?? '';
}

#!/usr/bin/env node
// Builds llama.cpp's own server (`llama-server`) from the source node-llama-cpp bundles
// (node_modules/node-llama-cpp/llama/gitRelease.bundle), once per machine, llama.cpp
// release and build variant, into a cache outside the checkout:
//   ${XDG_CACHE_HOME:-~/.cache}/hangar/llama-server/<release>-<variant>-<recipe hash>/llama-server
// Prints that path. A second run finds it and builds nothing. Needs git, CMake and a
// C++17 compiler (scripts/system-packages.txt); `--cuda` builds the CUDA variant (nvcc
// and the CUDA libraries, as in the CUDA image). Used by bench/llamacpp.ts as the baseline to match
// (issue 39; docs/decisions.md, "llama.cpp: llama-server as the engine process").
//
//   node scripts/build-llama-server.mjs [--print-path] [--jobs N] [--cuda]
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const llamaDir = path.join(root, 'node_modules', 'node-llama-cpp', 'llama');

/**
 * Our changes to llama.cpp's server, each applied to exactly one place or the build
 * stops. First: it parses every answer with the model's chat format and answers 500
 * when the text does not follow it ("The model produced output that does not match
 * the expected ... format"). Hangar parses tool calls and reasoning itself, from the
 * raw text, so the text is given back as content instead.
 */
const PATCHES = [
  {
    file: 'common/chat.cpp',
    find: 'throw std::runtime_error(std::string("The model produced output that does not match the expected ") + common_chat_format_name(params.format) + " format");',
    replace: '{ common_chat_msg raw; raw.role = "assistant"; raw.content = effective_input; return raw; } // hangar: raw text, parsed by the runtime',
  },
  {
    // A streamed token whose text ends inside a UTF-8 character was not sent at all (its
    // text goes out with a later one), so a client that reads token ids lost it: the
    // runtime decodes the ids itself and must see every one.
    file: 'tools/server/server-context.cpp',
    find: '        if (incomplete) {\n            slot.has_next_token = true;\n        }',
    replace:
      '        if (incomplete) {\n            slot.has_next_token = true;\n' +
      '            // hangar: the token goes out now, with no text yet (the runtime decodes the ids)\n' +
      '            result.text_to_send = "";\n            slot.add_token(result);\n' +
      '            if (slot.task->params.stream) {\n                send_partial_response(slot, result, false);\n            }\n        }',
  },
];

// CUDA only when asked (the CUDA image's build passes --cuda): a host may have nvcc without
// the CUDA libraries, or no GPU at all.
const cuda = process.argv.includes('--cuda');
const variant = cuda ? 'cuda' : 'cpu';
const cmakeFlags = [
  '-DCMAKE_BUILD_TYPE=Release',
  '-DBUILD_SHARED_LIBS=OFF',
  '-DLLAMA_CURL=OFF',
  '-DLLAMA_BUILD_TESTS=OFF',
  '-DLLAMA_BUILD_EXAMPLES=OFF',
  // The CPU build is for this machine (as llama.cpp builds by default); the CUDA one, for the image's GPUs.
  `-DGGML_NATIVE=${cuda ? 'OFF' : 'ON'}`,
  ...(cuda ? ['-DGGML_CUDA=ON'] : []),
];

export function release() {
  return JSON.parse(readFileSync(path.join(llamaDir, 'llama.cpp.info.json'), 'utf8')).tag;
}

/** The cached binary's path for this release and recipe (built or not). */
export function serverPath() {
  const recipe = createHash('sha256').update(JSON.stringify({ PATCHES, cmakeFlags, cpu: os.cpus()[0]?.model ?? '' })).digest('hex').slice(0, 12);
  const cache = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(cache, 'hangar', 'llama-server', `${release()}-${variant}-${recipe}`, 'llama-server');
}

function run(cmd, args, options = {}) {
  const result = spawnSync(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'], ...options });
  if (result.status !== 0) throw new Error(`\`${cmd} ${args.join(' ')}\` failed (exit ${result.status ?? result.signal})`);
}

function build(target) {
  for (const [tool, args] of [['git', ['--version']], ['cmake', ['--version']], ['c++', ['--version']]]) {
    if (spawnSync(tool, args).status !== 0) throw new Error(`building llama-server needs ${tool} (scripts/system-packages.txt)`);
  }
  const work = mkdtempSync(path.join(os.tmpdir(), 'hangar-llama-server-'));
  try {
    const src = path.join(work, 'src');
    console.error(`llama-server: building llama.cpp ${release()} (${variant}) in ${work}; this takes several minutes`);
    run('git', ['clone', '--quiet', path.join(llamaDir, 'gitRelease.bundle'), src], { stdio: ['ignore', 'ignore', 'inherit'] });
    for (const patch of PATCHES) {
      const file = path.join(src, patch.file);
      const text = readFileSync(file, 'utf8');
      // A new llama.cpp that moved the line must fail here, not build an unpatched server.
      if (text.split(patch.find).length !== 2) throw new Error(`llama-server: ${patch.file} no longer has the line Hangar patches; update scripts/build-llama-server.mjs`);
      writeFileSync(file, text.replace(patch.find, patch.replace));
    }
    const jobs = argValue('--jobs') ?? String(Math.max(1, os.availableParallelism()));
    run('cmake', ['-S', src, '-B', path.join(src, 'build'), ...cmakeFlags], { stdio: ['ignore', 'ignore', 'inherit'] });
    run('cmake', ['--build', path.join(src, 'build'), '--target', 'llama-server', '-j', jobs], { stdio: ['ignore', 'ignore', 'inherit'] });
    mkdirSync(path.dirname(target), { recursive: true });
    // Copied then renamed: a run stopped half way never leaves a half-written binary in the cache.
    const partial = `${target}.partial-${process.pid}`;
    copyFileSync(path.join(src, 'build', 'bin', 'llama-server'), partial);
    renameSync(partial, target);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function argValue(name) {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const target = serverPath();
  if (!process.argv.includes('--print-path') && !existsSync(target)) {
    try {
      build(target);
    } catch (err) {
      console.error(`llama-server: ${err.message}`);
      process.exit(1);
    }
  }
  console.log(target);
}

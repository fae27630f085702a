#!/usr/bin/env node
// Builds llama.cpp's own server (`llama-server`), the engine process of Hangar's llama.cpp
// replicas (docs/decisions.md, "llama.cpp: llama-server as the engine process"), from the
// source node-llama-cpp bundles (node_modules/node-llama-cpp/llama/gitRelease.bundle),
// once per llama.cpp release, variant and recipe, into a cache outside the checkout:
//   ${HANGAR_LLAMA_SERVER_CACHE:-${XDG_CACHE_HOME:-~/.cache}/hangar/llama-server}/<release>-<variant>-<recipe>/llama-server
// Prints that path. A second run finds it and builds nothing.
//
// Two recipes:
//  - linked (the default, what the runtime runs): only the server and its common code are
//    compiled; llama.cpp and ggml themselves are the prebuilt libraries node-llama-cpp
//    ships (@node-llama-cpp/<platform>-<arch>[-cuda]), copied beside the binary. Those
//    pick the best CPU kernels at run time and, in the CUDA variant, carry the CUDA
//    backend, so neither needs nvcc. About 2.5 minutes on 2 cores.
//  - --from-source: everything from source, tuned for this CPU (GGML_NATIVE), as a user
//    builds llama-server by hand: the baseline bench/llamacpp.ts compares against, with
//    one fix of its own so that it runs on a CPU with AMX (SOURCE_PATCHES). 6-9 minutes
//    on 2 cores.
// Needs git, CMake and a C++17 compiler (scripts/build-packages.txt).
//
//   node scripts/build-llama-server.mjs [--print-path] [--if-possible] [--jobs N] [--cuda] [--from-source]
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ENGINE_PATCHES, PATCHES, SOURCE_PATCHES } from './llama-server-patches.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const llamaDir = path.join(root, 'node_modules', 'node-llama-cpp', 'llama');

const cuda = process.argv.includes('--cuda');
const fromSource = process.argv.includes('--from-source');
const variant = cuda ? 'cuda' : 'cpu';
const platformName = `${process.platform}-${process.arch}${cuda ? '-cuda' : ''}`;
/** node-llama-cpp's prebuilt llama.cpp for this platform and variant (the linked recipe). */
const prebuiltDir = path.join(root, 'node_modules', '@node-llama-cpp', platformName, 'bins', platformName);
const cmakeFlags = [
  '-DCMAKE_BUILD_TYPE=Release',
  '-DBUILD_SHARED_LIBS=OFF',
  '-DLLAMA_CURL=OFF',
  '-DLLAMA_OPENSSL=OFF',
  '-DLLAMA_BUILD_TESTS=OFF',
  '-DLLAMA_BUILD_EXAMPLES=OFF',
  '-DLLAMA_BUILD_APP=OFF',
  ...(fromSource
    ? [`-DGGML_NATIVE=${cuda ? 'OFF' : 'ON'}`, ...(cuda ? ['-DGGML_CUDA=ON'] : [])]
    : // The binary finds the libraries copied beside it, wherever the folder is.
      ['-DCMAKE_SKIP_BUILD_RPATH=ON', '-DCMAKE_EXE_LINKER_FLAGS=-Wl,-rpath,$ORIGIN', `-DHANGAR_PREBUILT=${prebuiltDir}`]),
];

/**
 * The linked recipe's change to llama.cpp's top-level CMakeLists.txt: ggml and llama
 * become the prebuilt shared libraries instead of being built (and the install rules,
 * which name the built targets, go).
 */
const LINK_PREBUILT = [
  {
    file: 'CMakeLists.txt',
    find: 'if (NOT TARGET ggml AND NOT LLAMA_USE_SYSTEM_GGML)\n    set(GGML_BUILD_NUMBER ${LLAMA_BUILD_NUMBER})\n    set(GGML_BUILD_COMMIT ${LLAMA_BUILD_COMMIT})\n    add_subdirectory(ggml)\n    # ... otherwise assume ggml is added by a parent CMakeLists.txt\nendif()\n\n#\n# build the library\n#\n\nadd_subdirectory(src)\n',
    replace: [
      '# hangar: llama and ggml are node-llama-cpp\'s prebuilt libraries (scripts/build-llama-server.mjs)',
      'set(P "${HANGAR_PREBUILT}")',
      'file(GLOB HANGAR_GGML "${P}/libggml.*so")',
      'file(GLOB HANGAR_LLAMA "${P}/libllama.*so")',
      'add_library(ggml-base SHARED IMPORTED GLOBAL)',
      'set_target_properties(ggml-base PROPERTIES IMPORTED_LOCATION "${P}/libggml-base.so" INTERFACE_INCLUDE_DIRECTORIES "${CMAKE_CURRENT_SOURCE_DIR}/ggml/include")',
      'add_library(ggml SHARED IMPORTED GLOBAL)',
      'set_target_properties(ggml PROPERTIES IMPORTED_LOCATION "${HANGAR_GGML}" INTERFACE_INCLUDE_DIRECTORIES "${CMAKE_CURRENT_SOURCE_DIR}/ggml/include" INTERFACE_LINK_LIBRARIES ggml-base)',
      'add_library(llama SHARED IMPORTED GLOBAL)',
      'set_target_properties(llama PROPERTIES IMPORTED_LOCATION "${HANGAR_LLAMA}" INTERFACE_INCLUDE_DIRECTORIES "${CMAKE_CURRENT_SOURCE_DIR}/include" INTERFACE_LINK_LIBRARIES ggml)',
      '',
    ].join('\n'),
  },
  {
    file: 'CMakeLists.txt',
    find: '#\n# install\n#\n',
    replace: [
      // Off the token path (argument parsing, chat templates, JSON-schema grammars, the
      // multimodal library, which Hangar does not use): -O1 compiles in a third less time.
      // The server's own loop, where every token passes, keeps the release -O3.
      'target_compile_options(llama-common PRIVATE -O1)',
      'if (TARGET mtmd)',
      '    target_compile_options(mtmd PRIVATE -O1)',
      'endif()',
      'return() # hangar: no install rules (they name the targets that are prebuilt here)',
      '',
    ].join('\n'),
  },
];

export function release() {
  return JSON.parse(readFileSync(path.join(llamaDir, 'llama.cpp.info.json'), 'utf8')).tag;
}

/** The cache folder's root: HANGAR_LLAMA_SERVER_CACHE (the images set it), else the user's cache. */
export function cacheRoot() {
  const given = process.env.HANGAR_LLAMA_SERVER_CACHE?.trim();
  if (given) return path.resolve(given);
  return path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'hangar', 'llama-server');
}

/** The cached binary's path for this release, variant and recipe (built or not). */
export function serverPath() {
  const nodeLlamaCpp = JSON.parse(readFileSync(path.join(root, 'node_modules', 'node-llama-cpp', 'package.json'), 'utf8')).version;
  // A native build fits this CPU only; a linked one runs wherever the prebuilt libraries do.
  const recipe = createHash('sha256')
    .update(JSON.stringify({ PATCHES, cmakeFlags: cmakeFlags.filter((f) => !f.startsWith('-DHANGAR_PREBUILT=')), nodeLlamaCpp, ...(fromSource ? { cpu: os.cpus()[0]?.model ?? '', SOURCE_PATCHES } : { LINK_PREBUILT, ENGINE_PATCHES }) }))
    .digest('hex')
    .slice(0, 12);
  return path.join(cacheRoot(), `${release()}-${variant}${fromSource ? '-source' : ''}-${recipe}`, 'llama-server');
}

function run(cmd, args, options = {}) {
  const result = spawnSync(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'], ...options });
  if (result.status !== 0) throw new Error(`\`${cmd} ${args.join(' ')}\` failed (exit ${result.status ?? result.signal})`);
}

function applyPatch(src, patch) {
  const file = path.join(src, patch.file);
  const text = readFileSync(file, 'utf8');
  // A new llama.cpp that moved the line must fail here, not build an unpatched server.
  if (text.split(patch.find).length !== 2) throw new Error(`${patch.file} no longer has the text Hangar patches; update scripts/llama-server-patches.mjs`);
  writeFileSync(file, text.replace(patch.find, patch.replace));
}

function build(target) {
  for (const [tool, args] of [['git', ['--version']], ['cmake', ['--version']], ['c++', ['--version']]]) {
    if (spawnSync(tool, args).status !== 0) throw new Error(`building llama-server needs ${tool} (scripts/build-packages.txt)`);
  }
  if (!fromSource && !existsSync(prebuiltDir)) throw new Error(`node-llama-cpp's prebuilt llama.cpp for ${platformName} is not installed (${prebuiltDir}); run \`npm ci\`, or build --from-source`);
  const work = mkdtempSync(path.join(os.tmpdir(), 'hangar-llama-server-'));
  try {
    const src = path.join(work, 'src');
    const started = Date.now();
    console.error(`llama-server: building llama.cpp ${release()} (${variant}, ${fromSource ? 'from source' : 'linked to node-llama-cpp\'s libraries'}) in ${work}; this takes minutes`);
    run('git', ['-c', 'advice.detachedHead=false', 'clone', '--quiet', path.join(llamaDir, 'gitRelease.bundle'), src], { stdio: ['ignore', 'ignore', 'inherit'] });
    for (const patch of [...PATCHES, ...(fromSource ? SOURCE_PATCHES : [...ENGINE_PATCHES, ...LINK_PREBUILT])]) applyPatch(src, patch);
    const jobs = argValue('--jobs') ?? String(Math.max(1, os.availableParallelism()));
    run('cmake', ['-S', src, '-B', path.join(src, 'build'), ...cmakeFlags], { stdio: ['ignore', 'ignore', 'inherit'] });
    run('cmake', ['--build', path.join(src, 'build'), '--target', 'llama-server', '-j', jobs], { stdio: ['ignore', 'ignore', 'inherit'] });
    // Assembled beside the final folder, then renamed into place: a run stopped half
    // way never leaves a half-written server in the cache.
    const folder = path.dirname(target);
    mkdirSync(path.dirname(folder), { recursive: true });
    const partial = `${folder}.partial-${process.pid}`;
    rmSync(partial, { recursive: true, force: true });
    mkdirSync(partial);
    copyFileSync(path.join(src, 'build', 'bin', 'llama-server'), path.join(partial, 'llama-server'));
    chmodSync(path.join(partial, 'llama-server'), 0o755);
    if (!fromSource) {
      // ggml loads its CPU (and CUDA) backends from the executable's folder at start.
      for (const lib of readdirSync(prebuiltDir).filter((f) => f.endsWith('.so') && f !== 'libllama-common.so')) copyFileSync(path.join(prebuiltDir, lib), path.join(partial, lib));
    }
    rmSync(folder, { recursive: true, force: true });
    renameSync(partial, folder);
    // Builds of this variant for an older release or recipe are never used again (a
    // runtime still running one keeps its open files until it ends).
    const sameKind = new RegExp(`^[^-]+-${variant}${fromSource ? '-source' : ''}-[0-9a-f]{12}$`);
    for (const old of readdirSync(path.dirname(folder))) {
      if (old !== path.basename(folder) && sameKind.test(old)) rmSync(path.join(path.dirname(folder), old), { recursive: true, force: true });
    }
    console.error(`llama-server: built in ${Math.round((Date.now() - started) / 1000)} s: ${target}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function argValue(name) {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

/**
 * `--if-possible` (the set-up's way to call this): a host that cannot build says so and
 * exits 0, since node-llama-cpp then serves GGUF models (slower); a build that fails is a
 * bug to report and exits 1.
 */
function cannotBuild() {
  if ((process.env.HANGAR_LLAMA_SERVER_BUILD ?? '').trim() === 'skip') return 'llama-server not built (HANGAR_LLAMA_SERVER_BUILD=skip): node-llama-cpp serves GGUF models';
  const missing = [['cmake', ['--version']], ['c++', ['--version']], ['git', ['--version']]].filter(([tool, args]) => spawnSync(tool, args).status !== 0).map(([tool]) => tool);
  if (missing.length > 0) return `llama-server not built: ${missing.join(', ')} missing (scripts/build-packages.txt); node-llama-cpp serves GGUF models, slower`;
  return null;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const target = serverPath();
  if (process.argv.includes('--if-possible')) {
    if (existsSync(target)) {
      console.error('setup: llama-server is up to date');
    } else {
      const why = cannotBuild();
      console.error(`setup: ${why ?? 'building llama-server (about 2.5 minutes on 2 cores, once)'}`);
      if (why) process.exit(0);
    }
  }
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

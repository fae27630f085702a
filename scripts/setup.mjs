#!/usr/bin/env node
// Set-up, idempotent: compiles and bundles the control plane, builds the web UI (web/ → web/dist,
// again only when its sources change), makes the runtime's Python environment
// (python-runtime/.venv) from python-runtime's own requirement files, and builds
// llama.cpp's server for the llama.cpp engine (scripts/build-llama-server.mjs: about 2.5
// minutes on 2 cores, once per llama.cpp release; HANGAR_LLAMA_SERVER_BUILD=skip skips
// it, and node-llama-cpp then serves GGUF models, slower). A second run with nothing
// changed does no work beyond the compile.
//
// Flags: --with-test-tools (the Debian packages only the tests use),
// --system-packages-only (stop after the Debian packages), --without-llama-server
// (`npm test` uses these two to build llama-server beside its first tests),
// --runtime-environment-only (the Python environment alone: .ci/run makes it beside
// `npm ci`).
import { createHash } from 'node:crypto';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const runtimeDir = path.join(root, 'python-runtime');
const venv = path.join(runtimeDir, '.venv');
const venvPython = path.join(venv, 'bin', 'python');
const stampFile = path.join(venv, '.hangar-requirements.sha256');
// Every requirements*.txt of the runtime: base, the PyTorch engines, and dev tools.
const requirementFiles = readdirSync(runtimeDir)
  .filter((f) => /^requirements.*\.txt$/.test(f))
  .sort()
  .map((f) => path.join(runtimeDir, f));

function run(cmd, args, options = {}) {
  const result = spawnSync(cmd, args, { stdio: 'inherit', ...options });
  if (result.status !== 0) {
    console.error(`setup: \`${cmd} ${args.join(' ')}\` failed (exit ${result.status ?? result.signal}).`);
    process.exit(1);
  }
}

/**
 * Debian packages the service's engines use (scripts/system-packages.txt), the tools
 * that build llama-server (scripts/build-packages.txt) and, with
 * `--with-test-tools`, the ones only the tests use (scripts/system-packages-test.txt).
 * Installed with apt-get when missing and we are root on a Debian-like machine;
 * elsewhere we only say what is missing (the engines that need them then report
 * themselves unavailable in /v1/engines).
 */
function installSystemPackages() {
  const lists = ['system-packages.txt', 'build-packages.txt'];
  if (process.argv.includes('--with-test-tools')) lists.push('system-packages-test.txt');
  const wanted = lists
    .map((f) => path.join(root, 'scripts', f))
    .filter((f) => existsSync(f))
    .flatMap((f) => readFileSync(f, 'utf8').split('\n'))
    .map((line) => line.replace(/#.*/, '').trim())
    .filter(Boolean);
  const missing = wanted.filter((pkg) => spawnSync('dpkg-query', ['-W', '-f=${Status}', pkg], { encoding: 'utf8' }).stdout?.includes('install ok installed') !== true);
  if (missing.length === 0) return;
  const canInstall = process.getuid?.() === 0 && spawnSync('apt-get', ['--version']).status === 0;
  if (!canInstall) {
    console.warn(`setup: Debian packages missing (install them for the engines that use them): ${missing.join(' ')}`);
    return;
  }
  console.log(`setup: installing Debian packages: ${missing.join(' ')}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  // Another apt user (an unattended upgrade, a parallel set-up) may hold the lock a while.
  const lock = ['-o', 'DPkg::Lock::Timeout=300'];
  run('apt-get', [...lock, 'update', '-qq'], { env });
  run('apt-get', [...lock, 'install', '-y', '-qq', '--no-install-recommends', ...missing], { env });
}

/**
 * The web UI (web/, React + Vite) built to static files in web/dist, which the server
 * serves at `/`. Type-checked first (web/ has its own tsconfig: DOM and JSX). Skipped
 * when web/'s files and the lockfile are what the last build was made from.
 */
function buildWebUi() {
  const webDir = path.join(root, 'web');
  const outDir = path.join(webDir, 'dist');
  const stamp = path.join(outDir, '.hangar-sources.sha256');
  const sources = (dir) =>
    readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.name !== 'dist' && e.name !== 'node_modules')
      .flatMap((e) => (e.isDirectory() ? sources(path.join(dir, e.name)) : [path.join(dir, e.name)]))
      .sort();
  const hash = createHash('sha256');
  for (const f of [...sources(webDir), path.join(root, 'package-lock.json')]) hash.update(path.relative(root, f)).update(readFileSync(f));
  const digest = hash.digest('hex');
  if (existsSync(path.join(outDir, 'index.html')) && existsSync(stamp) && readFileSync(stamp, 'utf8').trim() === digest) {
    console.log('setup: web UI is up to date');
    return;
  }
  console.log('setup: building the web UI (tsc, vite)');
  run(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(webDir, 'tsconfig.json')]);
  run(process.execPath, [path.join(root, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '--config', path.join(webDir, 'vite.config.ts')]);
  writeFileSync(stamp, `${digest}\n`);
}

function findPython() {
  for (const candidate of [process.env.HANGAR_BOOTSTRAP_PYTHON, 'python3.11', 'python3'].filter(Boolean)) {
    const probe = spawnSync(candidate, ['-c', 'import sys, venv; print("%d.%d" % sys.version_info[:2])'], { encoding: 'utf8' });
    if (probe.status === 0) {
      const [major, minor] = probe.stdout.trim().split('.').map(Number);
      if (major === 3 && minor >= 10) return candidate;
    }
  }
  console.error('setup: needs Python 3.10+ with the venv module (set HANGAR_BOOTSTRAP_PYTHON to its path).');
  process.exit(1);
}

/**
 * Where these machines keep their only reachable package indexes as *extra* indexes,
 * pip retries the unreachable default index for every package; using the first extra
 * index as the index makes an install five times faster. On an ordinary machine the
 * setting is empty and pip's default applies.
 */
function pipEnv() {
  if (process.env.PIP_INDEX_URL) return process.env;
  const out = spawnSync(venvPython, ['-m', 'pip', 'config', 'get', 'global.extra-index-url'], { encoding: 'utf8' });
  const first = out.status === 0 ? out.stdout.trim().split(/\s+/)[0] : '';
  return first ? { ...process.env, PIP_INDEX_URL: first } : process.env;
}

/**
 * llama.cpp's server (scripts/build-llama-server.mjs --if-possible), in the background
 * beside the rest, at a lower priority so the compile and the web UI come first. A host
 * without the build tools (and no way to install them) gets a warning: node-llama-cpp
 * serves GGUF models there. A build that fails stops the set-up, since it is a bug to
 * report. `npm test` builds it itself, beside the tests that do not need it
 * (`--without-llama-server`).
 */
function buildLlamaServer() {
  if (process.argv.includes('--without-llama-server')) return Promise.resolve();
  // The script says what it does: up to date, skipped (and why), or building.
  return runInBackground('nice', ['-n', '10', process.execPath, path.join(root, 'scripts', 'build-llama-server.mjs'), '--if-possible'], {
    stdio: ['ignore', 'ignore', 'inherit'],
    failure: 'building llama-server failed: see above; HANGAR_LLAMA_SERVER_BUILD=skip sets up without it',
  });
}

/** Like run(), but in the background: resolves when the command succeeded, exits the set-up when it failed. */
function runInBackground(cmd, args, options = {}) {
  return new Promise((resolve) => {
    const { failure, ...spawnOptions } = options;
    const child = spawn(cmd, args, { stdio: 'inherit', ...spawnOptions });
    child.on('close', (code, signal) => {
      if (code !== 0) {
        console.error(`setup: ${failure ?? `\`${cmd} ${args.join(' ')}\` failed`} (exit ${code ?? signal}).`);
        process.exit(1);
      }
      resolve();
    });
  });
}

/**
 * The runtime's environment: python-runtime/.venv with every requirements file, again
 * only when one of them changes. Installing (mostly unpacking wheels, about 80 s of one
 * core) runs in the background; the promise ends with it.
 */
function installRuntimeEnvironment() {
  if (!existsSync(venvPython)) {
    console.log(`setup: creating ${path.relative(root, venv)}`);
    run(findPython(), ['-m', 'venv', venv]);
  }
  const hash = createHash('sha256');
  for (const f of requirementFiles) hash.update(readFileSync(f));
  const digest = hash.digest('hex');
  const installed = existsSync(stampFile) ? readFileSync(stampFile, 'utf8').trim() : '';
  if (installed === digest) {
    console.log('setup: runtime environment is up to date');
    return Promise.resolve();
  }
  console.log('setup: installing the runtime environment');
  const args = ['-m', 'pip', 'install', '--disable-pip-version-check', '-q'];
  for (const f of requirementFiles) args.push('-r', f);
  return runInBackground(venvPython, args, { env: pipEnv() }).then(() => writeFileSync(stampFile, `${digest}\n`));
}

// CI makes the environment beside `npm ci` (.ci/run), which needs nothing of node_modules.
if (process.argv.includes('--runtime-environment-only')) {
  await installRuntimeEnvironment();
  process.exit(0);
}

installSystemPackages();
// `npm test` installs them first, then builds llama-server beside the rest of the set-up.
if (process.argv.includes('--system-packages-only')) process.exit(0);

// The runtime's environment installs (mostly unpacking wheels) while the control plane
// compiles and the web UI builds (CPU): on two cores, side by side.
const environment = installRuntimeEnvironment();
const llamaServer = buildLlamaServer();

console.log('setup: compiling the control plane (tsc)');
run(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(root, 'tsconfig.build.json')]);
// One file for bin/hangar.js to start from (about 0.6 s sooner than dist/'s files).
run(process.execPath, [path.join(root, 'scripts', 'bundle-control-plane.mjs')]);
buildWebUi();

await environment;
await llamaServer;
execFileSync(venvPython, ['-c', 'import zmq, msgpack'], { stdio: 'inherit' });
console.log('setup: done');

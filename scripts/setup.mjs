#!/usr/bin/env node
// Set-up, idempotent: compiles the control plane and makes the runtime's Python
// environment (python-runtime/.venv) from python-runtime's own requirement files.
// A second run with nothing changed does no work beyond the compile.
import { createHash } from 'node:crypto';
import { execFileSync, spawnSync } from 'node:child_process';
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

console.log('setup: compiling the control plane (tsc)');
run(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(root, 'tsconfig.build.json')]);

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
} else {
  console.log('setup: installing the runtime environment');
  const args = ['-m', 'pip', 'install', '--disable-pip-version-check', '-q'];
  for (const f of requirementFiles) args.push('-r', f);
  run(venvPython, args, { env: pipEnv() });
  writeFileSync(stampFile, `${digest}\n`);
}
execFileSync(venvPython, ['-c', 'import zmq, msgpack'], { stdio: 'inherit' });
console.log('setup: done');

#!/usr/bin/env node
// `npm test`: the whole suite, with both cores busy, then a table of where the time went.
//
//   system packages ─▶ set-up ─▶ test models ─▶ pytest (2 workers) ─┐
//                   ─▶ llama-server build ─▶ container image build ──┴─▶ vitest (integration, shared, e2e) ─▶ vitest (serial)
//                                                                                                          ─▶ vitest (container, 2 files at a time)
//                                                                                                          ─▶ at SCHED_IDLE: typecheck + depcheck ─▶ vitest (unit)
//
// llama-server (scripts/build-llama-server.mjs) builds at nice +10 from right after the
// Debian packages, beside the set-up (mostly pip unpacking wheels) and pytest, which do
// not use it. The image build (docker/ci-build.sh) takes the host's llama-server, so it
// starts after it; on a machine that built the same inputs before it is skipped. The test
// models (test/fixtures/model_cache.py) are built once, in one Python process, before any
// test needs them. vitest's projects decide which files run two at a time (vitest.config.ts).
// The serial files keep one core busy at most, so the image's tests, which spend most
// of their time waiting on a container, run beside them, and the type check and the
// unit files, which wait on no timer of theirs, take what is left at SCHED_IDLE
// (docs/testing.md).
// Each part writes its timings under test-output/, read back for the table at the end
// (docs/testing.md explains it).
//
// Flags: --quick runs only the unit tests, TypeScript and Python (`npm run test:quick`).
// HANGAR_SKIP_CONTAINER_TESTS=<why> skips the image, as before.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'test-output');
const python = path.join(root, 'python-runtime', '.venv', 'bin', 'python');
const vitest = path.join(root, 'node_modules', 'vitest', 'vitest.mjs');
const quick = process.argv.includes('--quick');
const skipContainer = process.env.HANGAR_SKIP_CONTAINER_TESTS;
const started = Date.now();

/** name -> { seconds, ok, note, busy } for the table, in the order the phases started. */
const phases = new Map();

/** The machine's CPU time so far, from /proc/stat: [busy, all] in clock ticks (null off Linux). */
function cpuTicks() {
  try {
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1, 9).map(Number);
    const all = cpu.reduce((a, b) => a + b, 0);
    return [all - cpu[3] - cpu[4], all]; // idle and iowait are not busy
  } catch {
    return null;
  }
}

/** The share of every core's time that was busy between two cpuTicks() readings, in percent. */
function busyPercent(from, to) {
  return from && to && to[1] > from[1] ? (100 * (to[0] - from[0])) / (to[1] - from[1]) : null;
}
const startTicks = cpuTicks();

// Parts still running when the run stops early (the image build in the background): stopped with it.
const running = new Set();
process.on('exit', () => {
  for (const child of running) child.kill('SIGTERM');
});

/**
 * Runs a command to its end and records its wall time as `name`. Its output goes to ours
 * as it comes, or, with `logFile`, into that file and then to ours in one piece when it
 * ends (so two parts running at once do not interleave); with `summary` as well, only
 * the lines that start with `summary` are printed (and the last 60 lines on failure).
 */
function phase(name, cmd, args, { logFile, summary, env, idle } = {}) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const ticks0 = cpuTicks();
    phases.set(name, { seconds: null, ok: null });
    if (idle) [cmd, args] = atIdlePriority(cmd, args);
    const child = spawn(cmd, args, {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: logFile ? ['ignore', 'pipe', 'pipe'] : ['ignore', 'inherit', 'inherit'],
    });
    running.add(child);
    let log = '';
    let stdout = '';
    if (logFile) {
      child.stdout.on('data', (d) => {
        log += d;
        stdout += d;
      });
      child.stderr.on('data', (d) => (log += d));
    }
    child.on('close', (code, signal) => {
      running.delete(child);
      const ok = code === 0;
      phases.set(name, { seconds: (Date.now() - t0) / 1000, ok, note: ok ? '' : `exit ${code ?? signal}`, busy: busyPercent(ticks0, cpuTicks()) });
      if (logFile) {
        writeFileSync(logFile, log);
        let shown = log;
        if (summary) {
          const lines = log.split('\n');
          shown = `${lines.filter((l) => l.startsWith(summary)).join('\n')}\n${ok ? '' : `${lines.slice(-60).join('\n')}\n`}`;
        }
        process.stdout.write(`\n── ${name} (${path.relative(root, logFile)}) ──\n${shown}`);
      }
      resolve({ ok, stdout });
    });
  });
}

/**
 * The command under SCHED_IDLE (`chrt --idle 0`, inherited by its children): it runs only
 * when a core would otherwise be idle, so it cannot delay the timing-sensitive files
 * beside it. Where `chrt` is missing (util-linux; not on macOS), at nice +19 instead.
 */
function atIdlePriority(cmd, args) {
  const chrt = ['/usr/bin/chrt', '/bin/chrt'].find((p) => existsSync(p));
  return chrt ? [chrt, ['--idle', '0', cmd, ...args]] : ['nice', ['-n', '19', cmd, ...args]];
}

function must(result, what) {
  if (!result.ok) {
    printTable();
    console.error(`test: ${what} failed; nothing after it ran.`);
    process.exit(1);
  }
}

// ---- the time table -------------------------------------------------------------

function readJson(file) {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return null;
  }
}

/** Where each vitest run writes its files' times (test/timings-reporter.ts), by run. */
const timingsOf = (run) => path.join(out, `vitest-files-${run}.json`);
const VITEST_RUNS = ['unit', 'parallel', 'serial', 'container'];

/** [file, test, error] of every vitest test that failed (test/timings-reporter.ts). */
function vitestFailures() {
  const rows = [];
  for (const run of VITEST_RUNS) {
    for (const file of readJson(timingsOf(run)) ?? []) for (const f of file.failed ?? []) rows.push([file.file, f.test, f.error]);
  }
  return rows;
}

/** [test, message] of every pytest test that failed or erred, from its JUnit XML. */
function pytestFailures(xml) {
  const rows = [];
  for (const m of xml.matchAll(/<testcase classname="([^"]*)" name="([^"]*)"[^>]*>\s*<(failure|error) message="([^"]*)"/g)) {
    const message = m[4].split('&#10;')[0].replace(/&(quot|apos|lt|gt|amp);/g, (_, e) => ({ quot: '"', apos: "'", lt: '<', gt: '>', amp: '&' })[e]);
    rows.push([`${m[1].replace(/^tests\./, '')}::${m[2]}`, message.slice(0, 300)]);
  }
  return rows;
}

/** [seconds, file] of every vitest file this run timed. */
function vitestFiles() {
  const rows = [];
  for (const run of VITEST_RUNS) {
    for (const file of readJson(timingsOf(run)) ?? []) rows.push([file.seconds, file.file]);
  }
  return rows.sort((a, b) => b[0] - a[0]);
}

function pytestXml() {
  try {
    return readFileSync(path.join(out, 'pytest.xml'), 'utf8');
  } catch {
    return '';
  }
}

/** [seconds, test] of every pytest test (set-up, call and tear-down together) from its JUnit XML. */
function pytestTests(xml) {
  const rows = [];
  for (const m of xml.matchAll(/<testcase classname="([^"]*)" name="([^"]*)"[^>]*? time="([\d.]+)"/g)) {
    rows.push([Number(m[3]), `${m[1].replace(/^tests\./, '')}::${m[2]}`]);
  }
  return rows.sort((a, b) => b[0] - a[0]);
}

function printTable() {
  const fmt = (s) => (s === null || s === undefined ? '   ...' : s.toFixed(1).padStart(6));
  const pct = (b) => (b === null || b === undefined ? '    ' : `${Math.round(b).toString().padStart(3)}%`);
  const lines = ['', '── where the time went: wall seconds, and how busy the CPUs were meanwhile (parts after the set-up overlap) ──'];
  for (const [name, p] of phases) lines.push(`${fmt(p.seconds)}  ${pct(p.busy)}  ${name}${p.ok === false ? `  FAILED (${p.note})` : ''}`);
  lines.push(`${fmt((Date.now() - started) / 1000)}  ${pct(busyPercent(startTicks, cpuTicks()))}  total`);
  const files = vitestFiles();
  if (files.length > 0) {
    lines.push('', `15 slowest vitest files (of ${files.length}):`);
    for (const [s, f] of files.slice(0, 15)) lines.push(`${fmt(s)}  ${f}`);
  }
  const xml = pytestXml();
  const tests = pytestTests(xml);
  if (tests.length > 0) {
    lines.push('', `15 slowest pytest tests (of ${tests.length}):`);
    for (const [s, t] of tests.slice(0, 15)) lines.push(`${fmt(s)}  ${t}`);
  }
  // What failed, last, where a CI log's tail shows it (the parts' own output is far above).
  const failures = [...vitestFailures().map(([file, test, error]) => `  ${file} > ${test}\n      ${error}`), ...pytestFailures(xml).map(([test, error]) => `  pytest ${test}\n      ${error}`)];
  if (failures.length > 0) lines.push('', `failed tests (${failures.length}):`, ...failures);
  lines.push(`machine: ${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.cpus()[0]?.model ?? 'unknown CPU'}`);
  const text = lines.join('\n');
  console.log(text);
  writeFileSync(path.join(out, 'timings.txt'), `${text}\n`);
}

// ---- the run --------------------------------------------------------------------

mkdirSync(out, { recursive: true });
for (const f of [...VITEST_RUNS.map(timingsOf), path.join(out, 'pytest.xml'), path.join(out, 'timings.txt')]) rmSync(f, { force: true });

const setup = path.join(root, 'scripts', 'setup.mjs');
let llamaServer = Promise.resolve({ ok: true });
if (quick) {
  must(await phase('set-up', process.execPath, [setup]), 'the set-up');
} else {
  // llama-server (about 3 minutes of both cores) is needed from vitest's integration
  // files on, and by the image: it builds at nice +10 beside the rest of the set-up and
  // the type check, pytest and the unit files, which do not use it. Its build tools are
  // Debian packages, installed first.
  must(await phase('system packages', process.execPath, [setup, '--with-test-tools', '--system-packages-only']), 'installing the Debian packages');
  llamaServer = phase('llama-server build', 'nice', ['-n', '10', process.execPath, path.join(root, 'scripts', 'build-llama-server.mjs'), '--if-possible'], {
    logFile: path.join(out, 'llama-server-build.log'),
  });
  must(await phase('set-up', process.execPath, [setup, '--with-test-tools', '--without-llama-server']), 'the set-up');
}

// The image builds in the background once llama-server is built (the image takes the
// host's); its last stdout line is the image's name.
let imageBuild = Promise.resolve({ ok: true, stdout: '' });
if (!quick && !skipContainer) {
  imageBuild = llamaServer.then((built) =>
    built.ok
      ? phase('container image build', 'bash', [path.join(root, 'docker', 'ci-build.sh')], {
          logFile: path.join(out, 'container-build.log'),
          summary: 'docker/ci-build:',
        })
      : { ok: false, stdout: '' },
  );
}

/** `vitest run` of these projects, with the default reporter and the file timings. */
const vitestArgs = (...projects) => [vitest, 'run', ...projects.flatMap((p) => ['--project', p]), '--reporter=default', `--reporter=${path.join(root, 'test', 'timings-reporter.ts')}`];

// The runtimes pytest starts compute at a normal priority: beside the image build, at the
// production default (nice +10, SCHED_IDLE) they wait for every other process on the
// machine, past the harness's waits. test_lifecycle checks the defaults themselves,
// naming every setting it relies on.
const PYTEST_ENV = { HANGAR_RUNTIME_COMPUTE_POLICY: 'normal', HANGAR_RUNTIME_COMPUTE_NICE: '0' };

// Two workers (pytest-xdist), as vitest runs two files at a time: most tests wait on a
// runtime they started, and one worker left a core idle for 40% of pytest's time. A file
// stays on one worker (loadfile), so its module fixtures (a server, a runtime) start once.
const pytestArgs = ['-m', 'pytest', 'python-runtime/tests', '-q', '-p', 'no:cacheprovider', '-n', '2', '--dist', 'loadfile', `--junitxml=${path.join(out, 'pytest.xml')}`, '-o', 'junit_family=xunit1'];
if (quick) {
  const [checks, py, unit] = await Promise.all([
    phase('typecheck + depcheck', 'npm', ['run', '--silent', 'check'], { logFile: path.join(out, 'typecheck.log') }),
    phase('pytest (unit)', python, [...pytestArgs, '-m', 'not integration'], { logFile: path.join(out, 'pytest.log'), env: PYTEST_ENV }),
    phase('vitest (unit)', process.execPath, vitestArgs('unit'), { env: { HANGAR_TEST_TIMINGS: timingsOf('unit') } }),
  ]);
  printTable();
  process.exit(checks.ok && py.ok && unit.ok ? 0 : 1);
}

// The test models, then pytest, with the image build beside them. The vitest files that
// start servers wait for the build: a build saturates both cores at a normal priority,
// and a runtime's compute runs at SCHED_IDLE (docs/testing.md), so beside it an abort or
// a heartbeat could wait past a test's bound (seen: a llama.cpp abort not logged within 10 s).
const models = await phase('test models (build or reuse)', python, [path.join(root, 'test', 'fixtures', 'model_cache.py'), '--all'], { logFile: path.join(out, 'test-models.log') });
must(models, 'building the test models');
const py = await phase('pytest', python, pytestArgs, { logFile: path.join(out, 'pytest.log'), env: PYTEST_ENV });
must(py, 'pytest');
must(await llamaServer, 'building llama-server');
const built = await imageBuild;

// vitest's projects that run two files at a time, then the serial files alone
// (vitest.config.ts), with the type check and the unit files at SCHED_IDLE beside them:
// the serial files leave a core idle about half their time (docs/testing.md).
const vt = await phase('vitest', process.execPath, vitestArgs('integration', 'shared', 'e2e'), { env: { HANGAR_TEST_TIMINGS: timingsOf('parallel') } });
const besideSerial = (async () => {
  const checks = await phase('typecheck + depcheck (idle priority)', 'npm', ['run', '--silent', 'check'], { logFile: path.join(out, 'typecheck.log'), idle: true });
  const unit = await phase('vitest (unit, idle priority)', process.execPath, vitestArgs('unit'), {
    logFile: path.join(out, 'vitest-unit.log'),
    env: { HANGAR_TEST_TIMINGS: timingsOf('unit') },
    idle: true,
  });
  return { ok: checks.ok && unit.ok };
})();
// The image's tests beside the serial files, at a normal priority: they once ran after
// them, with a core idle for most of their minute; beside them, measured, the serial
// files took no longer (docs/testing.md).
const imageTests = (async () => {
  if (skipContainer) {
    console.warn(`test/container: SKIPPED, the Docker image is not built or tested (HANGAR_SKIP_CONTAINER_TESTS=${skipContainer})`);
    return { ok: true };
  }
  const image = built.stdout.trim().split('\n').pop() ?? '';
  if (!built.ok || !image) return { ok: false };
  return phase('vitest (container)', process.execPath, vitestArgs('container'), {
    logFile: path.join(out, 'vitest-container.log'),
    env: { HANGAR_TEST_IMAGE: image, HANGAR_TEST_TIMINGS: timingsOf('container') },
  });
})();
const serial = await phase('vitest (serial)', process.execPath, vitestArgs('serial'), { env: { HANGAR_TEST_TIMINGS: timingsOf('serial') } });
const container = await imageTests;
const beside = await besideSerial;
printTable();
process.exit(beside.ok && vt.ok && serial.ok && container.ok ? 0 : 1);

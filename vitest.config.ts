import { configDefaults, defineConfig } from 'vitest/config';

// Files whose checks hang on short timings (a heartbeat, a body or load-stall timeout of
// a second or two, a restart delay, a process that must be gone within a few seconds),
// on load shape (queue depths, backpressure, load loops), or that start a Ray cluster:
// they run one at a time, after the rest, with nothing of vitest's beside them.
const SERIAL = [
  'test/integration/backpressure.test.ts',
  'test/integration/cluster-start.test.ts',
  'test/integration/flexible-lifecycle.test.ts',
  'test/integration/hostile-inputs.test.ts',
  'test/integration/launch-control.test.ts',
  // Its abort check waits 10 s for the runtime's log line; beside a loaded machine it missed once.
  'test/integration/llama-cpp.test.ts',
  'test/integration/load.test.ts',
  'test/integration/ray-cluster.test.ts',
  'test/integration/recovery.test.ts',
  'test/integration/request-control.test.ts',
  'test/integration/restart-and-orphans.test.ts',
  'test/integration/runtime-transport.test.ts',
  'test/integration/shutdown-restore.test.ts',
  'test/integration/token-relay.test.ts',
  'test/integration/warm-spare.test.ts',
];

// Files that share one server (test/integration/harness/shared-server.ts): they only ask
// its models questions, and never stop, restart or break anything.
const SHARED = ['test/integration/llm-openai.test.ts', 'test/integration/openai-fields.test.ts', 'test/integration/completion-scoring.test.ts', 'test/integration/tokenizer-routes.test.ts'];

// The unit tests: no server (a few start one bare runtime against sockets of their own,
// or one Python to render a template).
// `npm run test:quick` runs these and pytest's unit tests.
const UNIT = ['api', 'auth', 'cli', 'config', 'errors', 'logging', 'registry', 'runtime', 'storage', 'supervisor', 'llama-runtime', 'web'].map((dir) => `test/${dir}/**/*.test.ts`);

export default defineConfig({
  test: {
    // Integration tests start real servers and Python processes: give them room.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Two files at a time (the machines have two cores, and most integration files wait
    // on a child process); the serial project runs after, one file at a time. Every
    // server a test starts has its own home and a port the kernel picks, so files never
    // share state. Projects with the same groupOrder run together and must agree on
    // the worker count.
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: UNIT, maxWorkers: 2, sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...SERIAL, ...SHARED],
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        // One server, started by the global set-up, for every file here (SHARED).
        extends: true,
        test: { name: 'shared', include: SHARED, globalSetup: ['test/integration/harness/shared-server.ts'], maxWorkers: 2, sequence: { groupOrder: 0 } },
      },
      {
        // The browser tests: headless Chromium against a real server.
        extends: true,
        test: { name: 'e2e', include: ['test/e2e/**/*.test.ts'], maxWorkers: 2, sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: { name: 'serial', include: SERIAL, maxWorkers: 1, fileParallelism: false, sequence: { groupOrder: 1 } },
      },
      {
        // The image tests: their global set-up builds the CPU image (docker/ci-build.sh)
        // unless `npm test` built it already (HANGAR_TEST_IMAGE), and runs only when one
        // of these files is selected.
        extends: true,
        test: {
          name: 'container',
          include: ['test/container/**/*.test.ts'],
          globalSetup: ['test/container/global-setup.ts'],
          // Ryuk (testcontainers' reaper) is an image to pull; the tests stop their own
          // containers. The engine has no bridge network, from which testcontainers would
          // otherwise work out the host's address: containers use the host's network.
          env: { TESTCONTAINERS_RYUK_DISABLED: 'true', TESTCONTAINERS_HOST_OVERRIDE: '127.0.0.1' },
          testTimeout: 180_000,
          hookTimeout: 300_000,
          // Two files at a time: each starts its own containers, on free ports, with
          // volumes of random names; most of their time is waiting on a container.
          maxWorkers: 2,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});

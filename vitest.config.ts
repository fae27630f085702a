import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Integration tests start real servers and Python processes: give them room, and
    // run files one at a time on CI's two cores so timings stay sane.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    fileParallelism: false,
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: { name: 'hangar', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, 'test/container/**'] },
      },
      {
        // The image tests: their global set-up builds the CPU image (docker/ci-build.sh),
        // and runs only when one of these files is selected.
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
        },
      },
    ],
  },
});

import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The image under test, or '' when the container tests are skipped on purpose. */
    hangarImage: string;
  }
}

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * Builds the CPU image once for every container test file (starting the Docker engine
 * if none runs), unless `npm test` built it already, beside the other suites, and names
 * it in HANGAR_TEST_IMAGE. A build that fails fails the run: CI must never pass without testing
 * the image. A contributor who cannot run Docker (no root, no engine) skips these
 * files on purpose with HANGAR_SKIP_CONTAINER_TESTS=<why>.
 */
export default function setup(project: TestProject): void {
  const skip = process.env.HANGAR_SKIP_CONTAINER_TESTS;
  if (skip) {
    console.warn(`test/container: SKIPPED, the Docker image is not built or tested (HANGAR_SKIP_CONTAINER_TESTS=${skip})`);
    project.provide('hangarImage', '');
    return;
  }
  const built = process.env.HANGAR_TEST_IMAGE;
  if (built) {
    project.provide('hangarImage', built);
    return;
  }
  const result = spawnSync('bash', [path.join(repoRoot, 'docker', 'ci-build.sh')], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
  });
  const image = result.stdout?.trim().split('\n').pop() ?? '';
  if (result.status !== 0 || !image) {
    throw new Error(
      `docker/ci-build.sh failed (exit ${result.status ?? result.signal}); its output is above. ` +
        'Without root or Docker, skip the container tests with HANGAR_SKIP_CONTAINER_TESTS=<reason>.',
    );
  }
  project.provide('hangarImage', image);
}

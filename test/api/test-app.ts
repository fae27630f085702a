import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import type { AuthConfig } from '../../src/auth/auth-config.js';
import { AccessControl } from '../../src/auth/access-control.js';
import { resolveConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/logging/logger.js';
import { Registry } from '../../src/registry/index.js';
import { LocalLauncher } from '../../src/runtime/local-launcher.js';
import { Supervisor } from '../../src/supervisor/supervisor.js';

/**
 * The real app, in process, with real parts (registry, supervisor, local launcher),
 * for tests that drive many routes with `inject` and start no runtime.
 */
export async function buildTestApp(auth: AuthConfig | null, options: { webRoot?: string; corsOrigins?: '*' | string[] | null } = {}): Promise<{ app: FastifyInstance; close: () => Promise<void> }> {
  const home = await mkdtemp(path.join(os.tmpdir(), 'hangar-app-'));
  const config = resolveConfig({ home, logLevel: 'silent' });
  const logger = createLogger('silent');
  const env = { pythonModules: new Set<string>(), executables: new Set<string>(), nodeModules: new Set<string>(), gpuCount: 0 };
  const registry = await Registry.open({ home, env, logger });
  // No warm spare: this app starts no runtime.
  const launcher = new LocalLauncher({ python: config.python, runtimeRoot: config.runtimeRoot, home, timings: config.lifecycle, logger, warmSpare: false, warmSpareModules: [] });
  const supervisor = new Supervisor({ resolver: registry, launcher, gpuCount: 0, cacheDir: path.join(home, 'cache'), timings: config.lifecycle, store: null, logger });
  const access = AccessControl.open({ databaseFile: ':memory:', config: auth });
  const app = await buildApp({
    streaming: { interval: 1, perToken: false, relayPaceMs: 10, stallMs: 60_000 },
    logger,
    registry,
    supervisor,
    access,
    gpuCount: 0,
    version: 'test',
    startedAt: Date.now(),
    ...options,
  });
  await app.ready();
  return {
    app,
    close: async () => {
      await app.close();
      access.close();
      await supervisor.shutdown();
      await rm(home, { recursive: true, force: true });
    },
  };
}

/** A concrete path for a route pattern: `:param` becomes `x`, a wildcard a file name. */
export function samplePath(url: string): string {
  return url.replace(/:[A-Za-z_]+/g, 'x').replace(/\*$/, 'index.html');
}

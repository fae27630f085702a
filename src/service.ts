import { statsSettings } from './config/stats-settings.js';
import { ModelSource } from './config/model-source.js';
import { existsSync, statSync } from 'node:fs';
import os from 'node:os';
import { makePrivateDirectory } from './storage/private-directory.js';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import { expandScopes } from './auth/permissions.js';
import { AccessControl } from './auth/access-control.js';
import { loadAuthConfig } from './auth/auth-config.js';
import type { Config } from './config/config.js';
import type { OnDemandConfig } from './config/on-demand-settings.js';
import { gpuTotals } from './runtime/gpu-memory.js';
import type { Logger } from './logging/logger.js';
import { Registry } from './registry/index.js';
import { probeEnvironment } from './runtime/environment-probe.js';
import { LocalLauncher } from './runtime/local-launcher.js';
import { RayCluster } from './runtime/ray-cluster.js';
import type { RuntimeLauncher } from './runtime/runtime.js';
import { SavedLaunches } from './supervisor/saved-launches.js';
import { InstanceStore } from './supervisor/instance-store.js';
import { Supervisor, type MemoryBudgets } from './supervisor/supervisor.js';
import { mostGpus } from './supervisor/cluster-workers.js';
import { version } from './version.js';
import { isLoopbackHost } from './config/loopback-host.js';

/** Past the drain timeout: how long the calls failed by the shutdown have to send their errors before connections are cut. */
const FINAL_ANSWERS_MS = 2_000;

export interface RunningService {
  app: FastifyInstance;
  supervisor: Supervisor;
  /** `http://host:port` the server listens on. */
  url: string;
  /** Stops taking requests, then stops every runtime and waits for the processes to be gone. */
  close(): Promise<void>;
}

/** Composes the embedded default service: local runtimes, state under the home folder. */
export async function startService(config: Config, logger: Logger): Promise<RunningService> {
  const startedAt = Date.now();
  // Everything written under the home (state, registrations, sockets, logs, and what the
  // runtimes download: they inherit it) is the owner's alone, whatever the caller's
  // umask: 0600 files, 0700 folders (docs/auth.md, "Secrets at rest").
  process.umask(0o077);
  // Checked first: a bad auth file must stop the start before anything is created.
  const authConfig = config.authConfigFile ? await loadAuthConfig(config.authConfigFile) : null;
  if (config.authConfigFile) warnIfReadableByOthers(config.authConfigFile, logger);
  await makePrivateDirectory(config.home);
  const access = AccessControl.open({
    databaseFile: AccessControl.databaseFile(config.home),
    config: authConfig,
    onFlushError: (err) => logger.error({ err }, 'could not write usage counts to the database; they are kept for the next try'),
  });
  if (!existsSync(config.python)) {
    logger.error({ python: config.python }, 'the runtime Python environment is missing; run `npm run setup` (or set HANGAR_PYTHON). Launches will fail until it exists.');
  }
  const env = await probeEnvironment(config.python, Registry.requiredPythonModules(), Registry.requiredExecutables(), Registry.requiredNodeModules());
  logger.info({ modules: [...env.pythonModules], executables: [...env.executables], node_modules: [...env.nodeModules], gpus: env.gpuCount }, 'runtime environment probed');

  const registry = await Registry.open({ home: config.home, env, logger, modelDirs: config.modelDirs });
  const autostart = new SavedLaunches(path.join(config.home, 'state', 'autostart.json'), logger);
  await autostart.load();
  const onDemandList = new SavedLaunches(path.join(config.home, 'state', 'on-demand.json'), logger, 'on-demand list');
  await onDemandList.load();
  // Cluster mode joins Ray before anything listens: a cluster that cannot be reached
  // (or Ray not installed) stops the start with the agent's own words.
  const cluster = config.cluster
    ? await RayCluster.connect({ ...config.cluster, python: config.python, runtimeRoot: config.runtimeRoot, home: config.home, timings: config.lifecycle, logger })
    : null;
  // Only the local launcher keeps a warm spare; a Ray actor is placed per launch.
  const local = cluster
    ? null
    : new LocalLauncher({
      python: config.python,
      runtimeRoot: config.runtimeRoot,
      home: config.home,
      timings: config.lifecycle,
      logger,
      warmSpare: config.warmSpare,
      warmSpareModules: config.warmSpareModules,
    });
  const launcher: RuntimeLauncher = cluster?.launcher ?? local!;
  // On a cluster, a replica's GPUs must fit on one node: the most any node has.
  const gpuCount = cluster ? mostGpus(await cluster.nodes()) : env.gpuCount;
  const supervisor = new Supervisor({
    resolver: registry,
    launcher,
    gpuCount,
    cluster,
    cacheDir: path.join(config.home, 'cache'),
    timings: config.lifecycle,
    store: new InstanceStore(path.join(config.home, 'state', 'instances.json'), logger),
    modelDirs: config.modelDirs,
    autostart,
    logger,
    // Budgets are this host's: in cluster mode Ray places replicas by its own accounting.
    memoryBudgets: cluster ? null : await memoryBudgets(config.onDemand, env.gpuCount),
    onDemandList,
    onDemand: { enabled: config.onDemand.enabled, waitMs: config.onDemand.waitMs, keepAliveMs: config.onDemand.onDemandKeepAliveMs },
    keepAliveMs: config.onDemand.keepAliveMs,
    idleCheckMs: config.onDemand.idleCheckMs,
  });
  logger.info({ on_demand: config.onDemand.enabled, memory_budget: config.onDemand.memoryBudgetBytes ?? 'default' }, 'memory budget and on-demand loading set');
  const app = await buildApp({ logger, registry, supervisor, access, gpuCount, version, startedAt, streaming: config.streaming, corsOrigins: config.corsOrigins, imageFetch: config.imageFetch,
    responsesRetentionHours: config.responsesRetentionHours,
    modelSource: new ModelSource(config.modelSource),
    requestBodyTimeoutMs: config.lifecycle.requestBodyTimeoutMs,
    bodyBudgetBytes: config.bodyBudgetBytes,
    stats: statsSettings(),
    // The same path as a SIGTERM: main.ts's handler drains, stops every model and exits.
    shutdown: () => process.kill(process.pid, 'SIGTERM') });
  if (authConfig) logger.info({ auth_config: config.authConfigFile }, 'authentication is on');
  else if (access.authenticator.enabled) {
    logger.info({ database: AccessControl.databaseFile(config.home) }, 'authentication is on (database users)');
    // Started without the --auth-config whose admin made the database users: if none of
    // them holds admin, nobody can manage users, keys or models, and nothing said why.
    if (!access.identities.listUsers().some((u) => u.enabled && expandScopes(u.permissions).has('admin'))) {
      logger.warn(`authentication is on, and no enabled database user holds admin: nobody can manage users, keys or models. Start again with the --auth-config file whose admin made these users, and give one of them admin (hangar users update <id> --permissions admin)`);
    }
  }
  const url = await app.listen({ host: config.host, port: config.port });
  if (!isLoopbackHost(config.host) && !access.authenticator.enabled) {
    // Every route, model launches and the code-running launchers included, is open to
    // whoever reaches this address (docs/auth.md, "Turning it on").
    // In the image (HANGAR_CONTAINER, docker/Dockerfile) 0.0.0.0 is how a published port
    // reaches the service: what to narrow is where the port is published.
    const narrow = process.env.HANGAR_CONTAINER === '1'
      ? 'or publish the port on 127.0.0.1 only (`-p 127.0.0.1:9997:9997`, as docker/compose*.yaml do by default)'
      : 'or listen on 127.0.0.1';
    logger.warn({ host: config.host }, `hangar listens on ${config.host}, beyond this machine, with authentication off: anyone who can reach it may launch models and run code; pass --auth-config, create an admin user, ${narrow}`);
  }
  if (config.restore) await supervisor.saved.restore();
  // After the restore, so a model both restored and listed starts once.
  supervisor.saved.startAutostart();
  local?.warmSpare();

  let closing: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      app.drain.start();
      const inFlight = app.drain.inFlight;
      if (inFlight > 0) logger.info({ in_flight: inFlight, timeout_ms: config.lifecycle.drainTimeoutMs }, 'draining: waiting for requests in flight');
      let stopping: Promise<void> | null = null;
      if (!(await app.drain.idle(config.lifecycle.drainTimeoutMs))) {
        logger.warn({ in_flight: app.drain.inFlight }, 'drain timeout reached; stopping anyway');
        // The calls still running fail first, "the server is shutting down" (503, or a
        // stream's error event), and their answers get a moment to leave: cut at once,
        // a stream ended with no error and no [DONE], and a non-stream call got no answer.
        stopping = supervisor.shutdown();
        await app.drain.idle(FINAL_ANSWERS_MS);
      }
      const closed = app.close();
      // Past the drain, what is still open is cut: a stream still running, or a kept-alive
      // socket gone idle, held close() (and the runtimes, and the exit) as long as its
      // client stayed, past the drain timeout the docs promise (until 2026-11-29).
      app.server.closeAllConnections();
      await closed;
      access.close();
      await (stopping ?? supervisor.shutdown());
      await cluster?.close();
    })();
    return closing;
  };
  return { app, supervisor, url, close };
}

/**
 * The memory budgets (docs/on-demand.md, "Memory budget"): host RAM as given, else 85%
 * of physical memory less what this service uses now (read at each launch); each
 * GPU's share of its memory as nvidia-smi reports it.
 */
async function memoryBudgets(settings: OnDemandConfig, gpuCount: number): Promise<() => MemoryBudgets> {
  const totals = gpuCount > 0 ? await gpuTotals() : {};
  const gpuBytes = Object.fromEntries(Object.entries(totals).map(([index, bytes]) => [index, Math.floor(bytes * settings.gpuMemoryFraction)]));
  return () => ({
    hostBytes: settings.memoryBudgetBytes ?? Math.max(0, Math.floor(os.totalmem() * 0.85) - process.memoryUsage.rss()),
    gpuBytes,
  });
}

/** As ssh does for keys: a users file others can read gives away every password and key in it. */
function warnIfReadableByOthers(file: string, logger: Logger): void {
  const mode = statSync(file).mode & 0o777;
  if ((mode & 0o077) !== 0) {
    logger.warn({ auth_config: file, mode: `0${mode.toString(8)}` }, `the auth config file ${file} can be read by other users (mode 0${mode.toString(8)}); its passwords and keys are in clear: run \`chmod 600 ${file}\``);
  }
}

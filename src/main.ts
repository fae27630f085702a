import { Command, InvalidArgumentError } from 'commander';
import { addClientCommands, clientArgv } from './cli/client-commands.js';
import { DEFAULT_HOST, DEFAULT_PORT, clusterConfig, defaultHome, parseCorsOrigins, resolveConfig, streamingFromEnv } from './config/config.js';
import { parseModelDirs } from './config/model-dirs.js';
import { onDemandFromEnv } from './config/on-demand-settings.js';
import { createLogger } from './logging/logger.js';
import { version } from './version.js';

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new InvalidArgumentError('must be an integer from 0 to 65535.');
  return port;
}

function parseStreamInterval(value: string): number {
  const tokens = Number(value);
  if (!Number.isInteger(tokens) || tokens < 1 || tokens > 1024) throw new InvalidArgumentError('must be an integer from 1 to 1024 (tokens per event).');
  return tokens;
}

const program = new Command('hangar').description('Hangar: a model inference service with the Xinference and OpenAI wire contracts').version(version);

program
  .command('start')
  .description('start the service (local runtimes, state in the home folder)')
  .option('-H, --host <host>', 'address to listen on', DEFAULT_HOST)
  .option('-p, --port <port>', 'port to listen on', parsePort, DEFAULT_PORT)
  .option('--home <dir>', 'state folder (env HANGAR_HOME)', defaultHome())
  .option('--log-level <level>', 'trace, debug, info, warn, error', process.env.HANGAR_LOG_LEVEL ?? 'info')
  .option('--auth-config <file>', 'turn on authentication with this users-and-secret JSON file')
  .option('--no-restore', 'do not relaunch the models that were running at the last stop')
  .option('--no-warm-spare', 'do not keep a pre-started runtime for the next launch (env HANGAR_WARM_SPARE=0)')
  .option('--cluster <address>', 'run models on a Ray cluster: ray://<head>:<port>, <gcs-host>:<port>, or auto (see docs/cluster.md)')
  .option('--stream-interval <tokens>', 'at most one SSE event per this many tokens on every stream (env HANGAR_STREAM_INTERVAL; default 1)', parseStreamInterval)
  .option('--model-dirs <dirs>', 'comma-separated folders local models (model_uri, model_path) must be in (env HANGAR_MODEL_DIRS); default: anywhere')
  .option('--cors-origins <origins>', 'web origins allowed to call the API from a browser: * (default), none, or a comma-separated list (env HANGAR_CORS_ORIGINS)')
  .option('--cluster-host <address>', 'with --cluster: the address of this host that every Ray node can reach (env HANGAR_CLUSTER_HOST)')
  .option('--on-demand', 'load the on-demand list\'s models when a request names them, unload them when idle (env HANGAR_ON_DEMAND=1; see docs/on-demand.md)')
  .option('--memory-budget <size>', 'host memory models may hold, in bytes or as 20GiB, 512MiB (env HANGAR_MEMORY_BUDGET); default: 85% of physical memory less the service\'s own')
  .action(async (opts: { host: string; port: number; home: string; logLevel: string; authConfig?: string; restore: boolean; warmSpare: boolean; cluster?: string; clusterHost?: string; streamInterval?: number; corsOrigins?: string; modelDirs?: string; onDemand?: boolean; memoryBudget?: string }) => {
    let cluster = null;
    let onDemand;
    let streaming;
    let corsOrigins;
    let modelDirs;
    try {
      modelDirs = parseModelDirs(opts.modelDirs ?? process.env.HANGAR_MODEL_DIRS);
      corsOrigins = parseCorsOrigins(opts.corsOrigins ?? process.env.HANGAR_CORS_ORIGINS ?? '*');
      cluster = opts.cluster === undefined ? null : clusterConfig(opts.cluster, opts.clusterHost ?? null);
      streaming = streamingFromEnv(process.env, opts.streamInterval ?? null);
      onDemand = onDemandFromEnv(process.env, { onDemand: opts.onDemand === true, memoryBudget: opts.memoryBudget });
    } catch (err) {
      process.stderr.write(`hangar: ${(err as Error).message}\n`);
      process.exit(2);
    }
    const config = resolveConfig({
      cluster,
      host: opts.host,
      port: opts.port,
      home: opts.home,
      logLevel: opts.logLevel,
      authConfigFile: opts.authConfig ?? null,
      restore: opts.restore,
      warmSpare: opts.warmSpare,
      streaming,
      corsOrigins,
      modelDirs,
      onDemand,
    });
    const logger = createLogger(config.logLevel);
    let service;
    try {
      // Loaded here, not at the top: the client commands then start without loading
      // the server (Fastify, ZeroMQ, the registry), which takes their start-up from about 1.5 s to 0.4 s.
      const { startService } = await import('./service.js');
      service = await startService(config, logger);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      process.stderr.write(`hangar: could not start: ${message}${writeHint(err, config.home)}\n`);
      process.exit(1);
    }
    logger.info({ url: service.url, home: config.home }, 'hangar is listening');
    let stopping = false;
    const stop = (signal: string): void => {
      // A second signal (Ctrl-C again, as uvicorn takes it) ends the drain's wait now: the
      // requests still running are answered 503 and every model is stopped, as at its timeout.
      if (stopping) {
        logger.warn({ signal }, 'second signal: not waiting for the requests in flight');
        service.app.drain.cutShort();
        return;
      }
      stopping = true;
      logger.info({ signal }, 'shutting down: draining, then stopping every model');
      service.close().then(
        () => process.exit(0),
        (err: unknown) => {
          logger.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
    };
    // `on`, not `once`: execa's exit hook re-raises a signal that has no other
    // listener left, which would kill us in the middle of the drain.
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });

// The client commands (src/cli/): launch, list, terminate, register, login, chat, ...
addClientCommands(program);

await program.parseAsync(clientArgv(program, process.argv));

/**
 * What to do about a home folder the service may not write (a bind mount owned by
 * another user is the common case in a container): which user must own it.
 */
function writeHint(err: unknown, home: string): string {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  if (code !== 'EACCES' && code !== 'EPERM' && code !== 'EROFS') return '';
  const uid = process.getuid?.();
  return uid === undefined
    ? ` (the home folder ${home} must be writable by this user)`
    : ` (the home folder ${home} must be writable by uid ${uid}: e.g. \`chown -R ${uid} <the folder>\` on the host, or a named volume)`;
}

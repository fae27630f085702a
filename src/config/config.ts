import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Everything the service reads from its command line and environment, resolved once
 * at start and passed down. Timings that govern process lifecycles live here, in one
 * place, so they can be read and tuned together (jupyter_client's habit).
 */
export interface Config {
  host: string;
  port: number;
  /** State folder: registrations, sockets, logs, cache. */
  home: string;
  /** The Python interpreter of the runtime's virtual environment. */
  python: string;
  /** Folder that holds the `hangar_runtime` package. */
  runtimeRoot: string;
  logLevel: string;
  /** `--auth-config`: the users and secret file; absent means no authentication. */
  authConfigFile: string | null;
  lifecycle: LifecycleTimings;
}

export interface LifecycleTimings {
  /** How often the control plane pings each runtime. */
  heartbeatIntervalMs: number;
  /** No pong for this long: the runtime is dead. Also handed to the runtime, which exits after as long without a ping. */
  heartbeatTimeoutMs: number;
  /** From spawn to HELLO. */
  helloTimeoutMs: number;
  /** Shutdown escalation: ask, wait; SIGTERM, wait; SIGKILL. */
  shutdownGraceMs: number;
  terminateGraceMs: number;
}

export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 9997;

export const defaultLifecycle: LifecycleTimings = {
  heartbeatIntervalMs: 1000,
  heartbeatTimeoutMs: 10_000,
  helloTimeoutMs: 60_000,
  shutdownGraceMs: 3000,
  terminateGraceMs: 3000,
};

/** The repository (or installed package) root: two levels above this file in both src/ and dist/. */
export const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export function defaultHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.HANGAR_HOME && env.HANGAR_HOME.length > 0 ? env.HANGAR_HOME : path.join(os.homedir(), '.hangar');
}

/** The runtime's interpreter: `HANGAR_PYTHON` wins, else the venv the set-up made. */
export function defaultPython(env: NodeJS.ProcessEnv = process.env): string {
  if (env.HANGAR_PYTHON) return env.HANGAR_PYTHON;
  return path.join(packageRoot, 'python-runtime', '.venv', 'bin', 'python');
}

export function resolveConfig(overrides: Partial<Config> = {}, env: NodeJS.ProcessEnv = process.env): Config {
  return {
    host: overrides.host ?? DEFAULT_HOST,
    port: overrides.port ?? DEFAULT_PORT,
    home: path.resolve(overrides.home ?? defaultHome(env)),
    python: overrides.python ?? defaultPython(env),
    runtimeRoot: overrides.runtimeRoot ?? path.join(packageRoot, 'python-runtime'),
    logLevel: overrides.logLevel ?? env.HANGAR_LOG_LEVEL ?? 'info',
    authConfigFile: overrides.authConfigFile ?? null,
    lifecycle: { ...defaultLifecycle, ...overrides.lifecycle },
  };
}

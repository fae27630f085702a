import { modelSourceFromEnv, type ModelSourceSetting } from './model-source.js';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ImageFetchSettings, imageFetchFromEnv } from './image-fetch.js';
import { parseModelDirs } from './model-dirs.js';
import { onDemandFromEnv, type OnDemandConfig } from './on-demand-settings.js';
import { relayPaceMs } from './relay-pace-setting.js';
import { streamStallMs } from './stream-stall-setting.js';
import { bodyBudgetBytes } from './body-budget-setting.js';

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
  /** Relaunch what was running before the last stop (`--no-restore` turns it off). */
  restore: boolean;
  /**
   * Keep one runtime process started ahead of need, its heavy imports done, for the
   * next launch (`--no-warm-spare` or HANGAR_WARM_SPARE=0 turns it off).
   */
  warmSpare: boolean;
  /** What the warm spare imports while it waits (HANGAR_WARM_SPARE_MODULES, comma-separated). */
  warmSpareModules: string[];
  lifecycle: LifecycleTimings;
  /** `--cluster`: run runtimes on this Ray cluster; null is local mode (the default). */
  cluster: ClusterConfig | null;
  streaming: StreamingSettings;
  /**
   * `--cors-origins` / HANGAR_CORS_ORIGINS: which web origins may call the API from a
   * browser. `*` (default, as Xinference): any; a list: those; null (`none`): CORS off.
   */
  corsOrigins: '*' | string[] | null;
  /** `--model-dirs` / HANGAR_MODEL_DIRS: where local models may come from; null: anywhere (model-dirs.ts). */
  modelDirs: string[] | null;
  /** How chat requests' image URLs are fetched (image-fetch.ts). */
  imageFetch: ImageFetchSettings;
  /** HANGAR_RESPONSES_RETENTION_HOURS: how long stored Responses API answers are kept (default 720, 30 days; 0: until deleted). */
  responsesRetentionHours: number;
  /** HANGAR_MODEL_SRC: the hub launches prefer (model-source.ts); null: each family's spec order. */
  modelSource: ModelSourceSetting;
  /** On-demand loading, idle unload and the memory budget (on-demand-settings.ts). */
  onDemand: OnDemandConfig;
  /** HANGAR_MAX_INFLIGHT_BODY_BYTES: request bodies held at once (body-budget-setting.ts); 0: no budget. */
  bodyBudgetBytes: number;
}

export const DEFAULT_RESPONSES_RETENTION_HOURS = 720;

/** HANGAR_RESPONSES_RETENTION_HOURS: a number of hours (fractions allowed), 0 for no expiry. */
export function responsesRetentionFromEnv(env: NodeJS.ProcessEnv): number {
  const raw = env.HANGAR_RESPONSES_RETENTION_HOURS;
  if (raw === undefined || raw.trim() === '') return DEFAULT_RESPONSES_RETENTION_HOURS;
  const hours = Number(raw);
  if (!Number.isFinite(hours) || hours < 0) throw new Error(`HANGAR_RESPONSES_RETENTION_HOURS must be a number of hours, 0 or more, got ${JSON.stringify(raw)}`);
  return hours;
}

/**
 * Reads a `--cors-origins` value: `*`, `none`, or comma-separated origins such as
 * `https://app.example.com,http://localhost:5173` (scheme, host and port; no path).
 */
export function parseCorsOrigins(raw: string): '*' | string[] | null {
  const value = raw.trim();
  if (value === '*' || value === '') return '*';
  if (value.toLowerCase() === 'none') return null;
  const origins = value.split(',').map((o) => o.trim()).filter((o) => o.length > 0);
  for (const origin of origins) {
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      throw new Error(`--cors-origins: ${JSON.stringify(origin)} is not an origin; give scheme://host[:port], e.g. https://app.example.com`);
    }
    if (url.origin !== origin.replace(/\/$/, '')) throw new Error(`--cors-origins: ${JSON.stringify(origin)} is not an origin (no path, query or user); did you mean ${url.origin}?`);
  }
  return origins.map((o) => o.replace(/\/$/, ''));
}

/** How streamed tokens are relayed (docs/performance.md, "Token relay"). */
export interface StreamingSettings {
  /**
   * `--stream-interval N` / HANGAR_STREAM_INTERVAL: at most one SSE event per N tokens
   * for every stream (vLLM's `--stream-interval`); a request's
   * `stream_options.stream_interval` overrides it. 1 (default): every token at once.
   */
  interval: number;
  /**
   * HANGAR_TOKEN_RELAY=per-token: the relay of protocol v1 days, one runtime message
   * and one awaited socket write per token, never merged. Kept only as the baseline of
   * bench/llm-relay.ts; the runtime reads the same variable.
   */
  perToken: boolean;
  /** HANGAR_RELAY_PACE_MS (relay-pace-setting.ts): llama.cpp runtimes read it; checked here at start. */
  relayPaceMs: number;
  /** HANGAR_STREAM_STALL_TIMEOUT_MS (stream-stall-setting.ts): a stream whose client takes nothing this long is closed. */
  stallMs: number;
}

export function streamingFromEnv(env: NodeJS.ProcessEnv, interval: number | null = null): StreamingSettings {
  const raw = env.HANGAR_STREAM_INTERVAL;
  const fromEnv = raw === undefined || raw === '' ? 1 : Number(raw);
  const value = interval ?? fromEnv;
  if (!Number.isInteger(value) || value < 1 || value > 1024) {
    throw new Error(`the stream interval must be an integer from 1 to 1024 tokens, got ${JSON.stringify(interval ?? raw)}`);
  }
  // A misspelt value would leave the default in place and a benchmark comparing nothing.
  const relay = env.HANGAR_TOKEN_RELAY ?? '';
  if (relay !== '' && relay !== 'batched' && relay !== 'per-token') {
    throw new Error(`HANGAR_TOKEN_RELAY must be "batched" (the default) or "per-token" (the benchmark's baseline), got ${JSON.stringify(relay)}`);
  }
  return { interval: value, perToken: relay === 'per-token', relayPaceMs: relayPaceMs(env), stallMs: streamStallMs(env) };
}

/** Cluster mode (docs/cluster.md). */
export interface ClusterConfig {
  /** `ray://host:port` (Ray Client), a GCS `host:port` of a cluster this host is in, or `auto`. */
  address: string;
  /** `--cluster-host` / HANGAR_CLUSTER_HOST: this host's address as Ray nodes reach it; null: the one Ray sees. */
  bindHost: string | null;
  /** HANGAR_CLUSTER_CPUS_PER_REPLICA: CPUs each replica's actor asks Ray for (default 1). */
  cpusPerReplica: number;
  /** HANGAR_CLUSTER_PLACEMENT_TIMEOUT_MS: how long Ray may take to place an actor before the launch fails with 503. */
  placementTimeoutMs: number;
}

/** The runtime's own list of what its torch-based engines import (torch, transformers, model classes). */
export const DEFAULT_WARM_SPARE_MODULES = ['hangar_runtime.warm_imports'];

/** HANGAR_WARM_SPARE: `0`, `false`, `no` or `off` turn the warm spare off; empty or absent leave the default (on). */
export function warmSpareFromEnv(env: NodeJS.ProcessEnv): boolean | undefined {
  const raw = env.HANGAR_WARM_SPARE?.trim().toLowerCase();
  if (raw === undefined || raw === '') return undefined;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  throw new Error(`HANGAR_WARM_SPARE must be 1 or 0 (true/false, on/off), got ${JSON.stringify(env.HANGAR_WARM_SPARE)}`);
}

function warmSpareModulesFromEnv(env: NodeJS.ProcessEnv): string[] | undefined {
  const raw = env.HANGAR_WARM_SPARE_MODULES;
  if (raw === undefined) return undefined;
  return raw.split(',').map((m) => m.trim()).filter((m) => m.length > 0);
}

export interface LifecycleTimings {
  /** How often the control plane pings each runtime. */
  heartbeatIntervalMs: number;
  /** No pong for this long: the runtime is dead. Also handed to the runtime, which exits after as long without a ping. */
  heartbeatTimeoutMs: number;
  /**
   * ZMTP heartbeats on each runtime's control socket. libzmq's own I/O thread answers
   * them, so a runtime busy in Python never misses one: a connection quiet for
   * `connectionTimeoutMs` means the process is frozen or its machine unreachable,
   * not merely busy. A hung work loop that still answers these is caught by the
   * slower PING/PONG heartbeat above.
   */
  connectionHeartbeatMs: number;
  connectionTimeoutMs: number;
  /** From spawn to HELLO. */
  helloTimeoutMs: number;
  /**
   * A load fails only when it stops moving: no PROGRESS for this long. Big models take
   * long, so there is no deadline for the whole load, only for silence.
   */
  loadStallTimeoutMs: number;
  /** Shutdown escalation: ask, wait; SIGTERM, wait; SIGKILL. */
  shutdownGraceMs: number;
  terminateGraceMs: number;
  /** Restart of a crashed replica: first delay, doubled per attempt up to the cap. */
  restartFirstDelayMs: number;
  restartMaxDelayMs: number;
  /** At most this many restarts of one replica within the window; past it the replica stays down. */
  restartLimit: number;
  restartWindowMs: number;
  /** On SIGTERM/SIGINT, how long in-flight requests may take to finish before runtimes are stopped. */
  drainTimeoutMs: number;
  /**
   * How long a client may take to send a whole request, headers and body (Node's
   * `requestTimeout`): a body trickled a byte a second would otherwise hold its
   * connection and memory for as long as the sender likes. Past it: 408 and close.
   * Answers (a long stream) are not limited by it.
   */
  requestBodyTimeoutMs: number;
}

export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 9997;

export const defaultLifecycle: LifecycleTimings = {
  heartbeatIntervalMs: 1000,
  heartbeatTimeoutMs: 10_000,
  connectionHeartbeatMs: 200,
  connectionTimeoutMs: 800,
  helloTimeoutMs: 60_000,
  loadStallTimeoutMs: 15 * 60_000,
  shutdownGraceMs: 3000,
  terminateGraceMs: 3000,
  restartFirstDelayMs: 500,
  restartMaxDelayMs: 30_000,
  restartLimit: 5,
  restartWindowMs: 10 * 60_000,
  drainTimeoutMs: 30_000,
  requestBodyTimeoutMs: 60_000,
};

/**
 * Every timing can be set from the environment as HANGAR_<NAME> in upper snake case,
 * e.g. HANGAR_RESTART_LIMIT=3 or HANGAR_DRAIN_TIMEOUT_MS=5000.
 */
export function lifecycleFromEnv(env: NodeJS.ProcessEnv): Partial<LifecycleTimings> {
  const out: Partial<LifecycleTimings> = {};
  for (const key of Object.keys(defaultLifecycle) as Array<keyof LifecycleTimings>) {
    const name = `HANGAR_${key.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`;
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number, got ${JSON.stringify(raw)}`);
    out[key] = value;
  }
  return out;
}

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
    restore: overrides.restore ?? true,
    // The flag can only turn it off; the environment decides when the flag is absent.
    warmSpare: overrides.warmSpare === false ? false : (warmSpareFromEnv(env) ?? true),
    warmSpareModules: overrides.warmSpareModules ?? warmSpareModulesFromEnv(env) ?? DEFAULT_WARM_SPARE_MODULES,
    lifecycle: { ...defaultLifecycle, ...lifecycleFromEnv(env), ...overrides.lifecycle },
    cluster: overrides.cluster ?? null,
    streaming: overrides.streaming ?? streamingFromEnv(env),
    corsOrigins: overrides.corsOrigins !== undefined ? overrides.corsOrigins : parseCorsOrigins(env.HANGAR_CORS_ORIGINS ?? '*'),
    modelDirs: overrides.modelDirs !== undefined ? overrides.modelDirs : parseModelDirs(env.HANGAR_MODEL_DIRS),
    imageFetch: overrides.imageFetch ?? imageFetchFromEnv(env),
    responsesRetentionHours: overrides.responsesRetentionHours ?? responsesRetentionFromEnv(env),
    modelSource: overrides.modelSource !== undefined ? overrides.modelSource : modelSourceFromEnv(env),
    onDemand: overrides.onDemand ?? onDemandFromEnv(env),
    bodyBudgetBytes: overrides.bodyBudgetBytes ?? bodyBudgetBytes(env),
  };
}

/** The cluster settings for `--cluster <address>`, the rest from the environment. */
export function clusterConfig(address: string, bindHost: string | null, env: NodeJS.ProcessEnv = process.env): ClusterConfig {
  const number = (name: string, fallback: number, min: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < min) throw new Error(`${name} must be a number of at least ${min}, got ${JSON.stringify(raw)}`);
    return value;
  };
  if (address !== 'auto' && !/^(ray:\/\/)?[^\s/:]+:\d+$/.test(address)) {
    throw new Error(`--cluster must be ray://<host>:<port>, <host>:<port> or auto, got ${JSON.stringify(address)}`);
  }
  return {
    address,
    bindHost: bindHost ?? (env.HANGAR_CLUSTER_HOST || null),
    cpusPerReplica: number('HANGAR_CLUSTER_CPUS_PER_REPLICA', 1, 0),
    placementTimeoutMs: number('HANGAR_CLUSTER_PLACEMENT_TIMEOUT_MS', 60_000, 1000),
  };
}

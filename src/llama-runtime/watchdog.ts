import { ExitCode } from './exit-codes.js';
import type { RuntimeLog } from './runtime-log.js';

const CHECK_INTERVAL_MS = 500;

/**
 * Exits when the control plane is gone (docs/runtime-protocol.md, "Heartbeat and
 * exit"): the parent pid changed (we were re-parented), or no PING for the timeout.
 * The check runs on the event loop, which llama.cpp never holds: its compute runs on
 * its own threads.
 */
export function startWatchdog(options: { parentPid: number; heartbeatTimeoutMs: number; silentForMs: () => number }, log: RuntimeLog): void {
  const timer = setInterval(() => {
    let reason: string | null = null;
    if (options.parentPid && process.ppid !== options.parentPid) reason = `parent pid is ${process.ppid}, expected ${options.parentPid}`;
    const silent = options.silentForMs();
    if (!reason && silent >= options.heartbeatTimeoutMs) {
      reason = `no PING for ${(silent / 1000).toFixed(1)}s (timeout ${options.heartbeatTimeoutMs / 1000}s)`;
    }
    if (reason) {
      log.error(`control plane gone (${reason}); exiting`);
      process.exit(ExitCode.CONTROL_PLANE_GONE);
    }
  }, CHECK_INTERVAL_MS);
  timer.unref();
}

import type { ConnectionTimings } from './connection-options.js';

type LivenessTimings = Pick<ConnectionTimings, 'heartbeatIntervalMs' | 'heartbeatTimeoutMs' | 'connectionTimeoutMs'>;

export interface LivenessHooks {
  /** Sends a PING to the runtime's control identity. */
  ping: () => void;
  /** No PONG within heartbeatTimeoutMs: the runtime is dead (the reason says why). */
  dead: (reason: string) => void;
  /** The runtime's peer left and did not answer the probe. */
  lost: () => void;
  /** A peer left, but the runtime answered: someone else had connected. */
  stranger: () => void;
}

/**
 * Whether a runtime is still there (docs/runtime-protocol.md, "Heartbeat"): PINGs
 * every heartbeatIntervalMs once it said HELLO, the time of its last PONG, and the
 * probe that tells the runtime's own disconnect from a stranger's.
 */
export class RuntimeLiveness {
  private heartbeat: NodeJS.Timeout | null = null;
  private probeTimer: NodeJS.Timeout | null = null;
  private lastPong = 0;

  constructor(
    private readonly timings: LivenessTimings,
    private readonly hooks: LivenessHooks,
  ) {}

  pong(): void {
    this.lastPong = Date.now();
  }

  start(): void {
    this.lastPong = Date.now();
    const beat = (): void => {
      if (Date.now() - this.lastPong > this.timings.heartbeatTimeoutMs) {
        this.hooks.dead(`no heartbeat from the runtime for ${this.timings.heartbeatTimeoutMs} ms`);
        return;
      }
      this.hooks.ping();
    };
    beat();
    this.heartbeat = setInterval(beat, this.timings.heartbeatIntervalMs);
    this.heartbeat.unref();
  }

  /**
   * Only the runtime's own peer leaving counts as losing it. A PING goes to its routing
   * identity (a ROUTER drops it when that peer is gone); a PONG within the ZMTP timeout
   * means the runtime is still there and whoever left was someone else. Silence means
   * it is gone. `stillWanted` is asked when the time is up (the connection may have
   * closed or died meanwhile).
   */
  probe(stillWanted: () => boolean): void {
    if (this.probeTimer) return;
    const since = Date.now();
    this.hooks.ping();
    this.probeTimer = setTimeout(() => {
      this.probeTimer = null;
      if (!stillWanted()) return;
      if (this.lastPong >= since) this.hooks.stranger();
      else this.hooks.lost();
    }, this.timings.connectionTimeoutMs);
    this.probeTimer.unref();
  }

  stop(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
    if (this.probeTimer) clearTimeout(this.probeTimer);
    this.probeTimer = null;
  }
}

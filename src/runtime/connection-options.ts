import type { CurveKeyPair } from './cluster-keys.js';

/**
 * Cluster mode: both sockets listen on `tcp://<host>:*` as CURVE servers, and only
 * peers the process's CurveGate knows get in (docs/runtime-protocol.md, "Transport
 * and security"). The gate must be open before binding: the sockets enforce ZAP.
 */
export interface SecureBinding {
  host: string;
  server: CurveKeyPair;
}

export interface ConnectionTimings {
  heartbeatIntervalMs: number;
  heartbeatTimeoutMs: number;
  connectionHeartbeatMs: number;
  connectionTimeoutMs: number;
  helloTimeoutMs: number;
  loadStallTimeoutMs: number;
}

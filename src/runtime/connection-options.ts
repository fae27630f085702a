import type { LifecycleTimings } from '../config/config.js';
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

/** The lifecycle settings a connection itself applies (meanings in config.ts). */
export type ConnectionTimings = Pick<
  LifecycleTimings,
  'heartbeatIntervalMs' | 'heartbeatTimeoutMs' | 'connectionHeartbeatMs' | 'connectionTimeoutMs' | 'helloTimeoutMs' | 'loadStallTimeoutMs'
>;

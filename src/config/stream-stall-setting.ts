/** The default: nginx's `send_timeout`. */
export const DEFAULT_STREAM_STALL_MS = 60_000;
const MIN_STREAM_STALL_MS = 100;
// Node's timers fire a longer wait at once.
const MAX_STREAM_STALL_MS = 2_147_483_647;

/**
 * HANGAR_STREAM_STALL_TIMEOUT_MS (docs/performance.md, "A client that stops reading"):
 * how long a stream's client may take nothing of what was written before its
 * connection is closed and its generation stopped. Unset, 60 s. Without it a client
 * that stopped reading (a phone gone offline) held its batch slot, kept its model
 * generating to max_tokens and every token buffered in the control plane.
 */
export function streamStallMs(env: NodeJS.ProcessEnv): number {
  const raw = env.HANGAR_STREAM_STALL_TIMEOUT_MS?.trim() ?? '';
  if (raw === '') return DEFAULT_STREAM_STALL_MS;
  const ms = Number(raw);
  if (!/^\d+$/.test(raw) || ms < MIN_STREAM_STALL_MS || ms > MAX_STREAM_STALL_MS) {
    throw new Error(`HANGAR_STREAM_STALL_TIMEOUT_MS must be an integer from ${MIN_STREAM_STALL_MS} to ${MAX_STREAM_STALL_MS} (milliseconds), got ${JSON.stringify(raw)}`);
  }
  return ms;
}

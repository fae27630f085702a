/** The default pace: at most one relayed step per 10 ms while tokens come faster. */
export const DEFAULT_RELAY_PACE_MS = 10;
const MAX_RELAY_PACE_MS = 100;

/**
 * HANGAR_RELAY_PACE_MS (docs/performance.md, "The relay's pace"): while a llama.cpp
 * replica's tokens come faster than one per this many milliseconds, its runtime relays
 * them a step at most this often. An integer from 0 (every read relayed at once) to
 * 100; unset, 10. `HANGAR_TOKEN_RELAY=per-token` (the relay benchmark's baseline)
 * means 0. Read by the control plane at start, so that a bad value stops the service
 * rather than every launch, and by each llama.cpp runtime, which a launch's `envs`
 * can give another value.
 */
export function relayPaceMs(env: NodeJS.ProcessEnv): number {
  if (env.HANGAR_TOKEN_RELAY === 'per-token') return 0;
  const raw = env.HANGAR_RELAY_PACE_MS?.trim() ?? '';
  if (raw === '') return DEFAULT_RELAY_PACE_MS;
  const ms = Number(raw);
  if (!/^\d+$/.test(raw) || ms > MAX_RELAY_PACE_MS) {
    throw new Error(`HANGAR_RELAY_PACE_MS must be an integer from 0 to ${MAX_RELAY_PACE_MS} (milliseconds), got ${JSON.stringify(raw)}`);
  }
  return ms;
}

/** How the service talks to model hubs: settings read from the environment (docs/registry.md, "The hubs"). */

/** huggingface_hub's offline switch (`HF_HUB_OFFLINE=1`): no request to a hub leaves the machine. */
export function hubOffline(env: Record<string, string | undefined>): boolean {
  return /^(1|true|yes|on)$/i.test(env.HF_HUB_OFFLINE?.trim() ?? '');
}

/** How long one request to the hub may take before a launch or search answers 503 (`HANGAR_HUB_TIMEOUT_MS`, default 10 s). */
export function hubTimeoutMs(env: Record<string, string | undefined> = process.env): number {
  const value = Number(env.HANGAR_HUB_TIMEOUT_MS);
  return Number.isFinite(value) && value > 0 ? value : 10_000;
}

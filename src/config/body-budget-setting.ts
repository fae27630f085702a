const MiB = 1024 * 1024;
/** The default: five chat requests with images at OpenAI's 50 MiB cap, or thousands of ordinary ones. */
export const DEFAULT_BODY_BUDGET_BYTES = 256 * MiB;
const MIN_BODY_BUDGET_BYTES = 1 * MiB;

/**
 * HANGAR_MAX_INFLIGHT_BODY_BYTES (docs/performance.md, "Request bodies in flight"): the
 * request bodies the service holds at once, together, from their first byte to their
 * answer. Each route bounds its own body; nothing bounded their sum, and fourteen
 * concurrent valid 31 MB chat bodies held the event loop for seconds and the heap for
 * gigabytes. `0` turns the budget off.
 */
export function bodyBudgetBytes(env: NodeJS.ProcessEnv): number {
  const raw = env.HANGAR_MAX_INFLIGHT_BODY_BYTES?.trim() ?? '';
  if (raw === '') return DEFAULT_BODY_BUDGET_BYTES;
  const bytes = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(bytes) || (bytes !== 0 && bytes < MIN_BODY_BUDGET_BYTES)) {
    throw new Error(`HANGAR_MAX_INFLIGHT_BODY_BYTES must be 0 (no budget) or an integer of bytes from ${MIN_BODY_BUDGET_BYTES}, got ${JSON.stringify(raw)}`);
  }
  return bytes;
}

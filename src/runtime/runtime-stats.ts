import type { RuntimeStats } from './runtime.js';

/**
 * The `stats` map of a PONG (docs/runtime-protocol.md, "Stats") as numbers, or null
 * when it is absent (an older runtime) or not a map. A field that is not a finite
 * number reads as 0: the stats feed metrics, never decisions.
 */
export function parseStats(raw: unknown): RuntimeStats | null {
  if (!raw || typeof raw !== 'object') return null;
  const map = raw as Record<string, unknown>;
  const num = (key: string): number => {
    const v = map[key];
    return typeof v === 'number' && Number.isFinite(v) ? v : 0;
  };
  return {
    queueDepth: num('queue_depth'),
    batchSize: num('batch_size'),
    batchSteps: num('batch_steps'),
    batchStepCalls: num('batch_step_calls'),
    rssBytes: num('rss_bytes'),
  };
}

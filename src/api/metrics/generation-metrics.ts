import type { ServiceMetrics } from './service-metrics.js';

/** The fields of a runtime's generation chunk or result that the metrics read. */
interface GenerationValue {
  text?: unknown;
  reasoning_content?: unknown;
  usage?: { completion_tokens?: unknown } | null;
}

/** Completion tokens of a non-stream result (docs/runtime-protocol.md, RESULT of chat/generate). */
export function countGenerated(metrics: ServiceMetrics, model: string, value: unknown): void {
  const tokens = (value as GenerationValue | null)?.usage?.completion_tokens;
  if (typeof tokens === 'number') metrics.generated(model, tokens);
}

/**
 * Notes, for a stream, the time to the first chunk that carries text (from
 * `arrivedAt`, the request's arrival) and the usage of the last. It sees every chunk
 * relayed and copies none: it sits on the streaming hot path.
 */
export function chunkObserver(metrics: ServiceMetrics, model: string, arrivedAt: number): (values: readonly unknown[]) => void {
  let sawText = false;
  return (values) => {
    for (const value of values) {
      const v = value as GenerationValue | null;
      if (!sawText && v && (v.text || v.reasoning_content)) {
        sawText = true;
        metrics.firstToken(model, (performance.now() - arrivedAt) / 1000);
      }
      if (v?.usage) countGenerated(metrics, model, v);
    }
  };
}

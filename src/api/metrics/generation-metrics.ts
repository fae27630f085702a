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
 * The runtime's chunks, passed through unchanged, noting the time to the first one
 * that carries text (from `arrivedAt`, the request's arrival) and the usage of the last.
 * No copy of any chunk is made: this sits on the streaming hot path.
 */
export function observeStream(metrics: ServiceMetrics, model: string, arrivedAt: number, source: AsyncIterator<unknown>): AsyncIterator<unknown> {
  let sawText = false;
  return {
    async next() {
      const result = await source.next();
      if (!result.done) {
        const v = result.value as GenerationValue | null;
        if (!sawText && v && (v.text || v.reasoning_content)) {
          sawText = true;
          metrics.firstToken(model, (performance.now() - arrivedAt) / 1000);
        }
        countGenerated(metrics, model, v);
      }
      return result;
    },
    async return(value?: unknown) {
      return (await source.return?.(value)) ?? { value: undefined, done: true };
    },
  };
}

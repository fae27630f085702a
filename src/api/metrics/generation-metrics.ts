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
 * `arrivedAt`, the request's arrival) and its tokens as they are relayed: each
 * text-bearing chunk is one, and a usage report adds what the chunks did not count
 * (the counter never goes back). So a stream the client leaves, or one cut short,
 * counts what it relayed, and a long one shows as a steady rate, as the model's series
 * and the usage ledger count it (until 2026-11-29 only the final usage counted). It
 * sees every chunk relayed and copies none: it sits on the streaming hot path.
 */
export function chunkObserver(metrics: ServiceMetrics, model: string, arrivedAt: number): (values: readonly unknown[]) => void {
  let sawText = false;
  let counted = 0;
  let reported = 0;
  return (values) => {
    let tokens = 0;
    for (const value of values) {
      const v = value as GenerationValue | null;
      if (!v) continue;
      // A final value may carry text too (an answer with tools is held to the end): it
      // is the first text then, and its usage, not the chunk, counts its tokens.
      if (v.text || v.reasoning_content) {
        if (!sawText) {
          sawText = true;
          metrics.firstToken(model, (performance.now() - arrivedAt) / 1000);
        }
        if (!v.usage) tokens++;
      }
      const completion = v.usage?.completion_tokens;
      if (typeof completion === 'number' && Number.isFinite(completion)) reported += completion;
    }
    // Once per relayed step, not per token.
    const owed = Math.max(tokens, reported - counted);
    if (owed > 0) {
      metrics.generated(model, owed);
      counted += owed;
    }
  };
}

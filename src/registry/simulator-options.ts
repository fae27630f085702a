import { z } from 'zod';

/**
 * A launch option given as a number, or as a string holding one: the CLI passes
 * `--step-ms 5` on as "5", which the runtime reads the same way.
 */
function numeric(low: number, high: number, integer = false): z.ZodType {
  // Only for a value of the wrong kind; ranges keep zod's own messages ("Too small: ...").
  const error = (issue: { code?: string; input?: unknown }): string | undefined =>
    issue.code === 'invalid_type' || (integer && issue.code === 'invalid_format') ? `expected ${integer ? 'an integer' : 'a number'} (or a string holding one), got ${JSON.stringify(issue.input)}` : undefined;
  const number = integer ? z.int({ error }).min(low).max(high) : z.number({ error }).min(low).max(high);
  const fromText = (value: unknown): unknown => (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)) ? Number(value) : value);
  return z.preprocess(fromText, number).nullish();
}

/**
 * The simulator engine's launch options (docs/simulator.md), with the ranges the
 * runtime's own check uses (`engines/simulator/options.py`). Other extra fields pass:
 * generic ones such as `device` reach every engine.
 */
export const simulatorOptions = z.looseObject({
  step_ms: numeric(0, 60_000),
  ttft_ms: numeric(0, 600_000),
  max_batch: numeric(1, 65_536, true),
});

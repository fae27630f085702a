import { z } from 'zod';

/**
 * A launch option given as a number, or as a string holding one: the CLI passes
 * `--step-ms 5` on as "5", which the runtime reads the same way.
 */
export function numeric(low: number, high: number, integer = false): z.ZodType {
  // Only for a value of the wrong kind; ranges keep zod's own messages ("Too small: ...").
  const error = (issue: { code?: string; input?: unknown }): string | undefined =>
    issue.code === 'invalid_type' || (integer && issue.code === 'invalid_format') ? `expected ${integer ? 'an integer' : 'a number'} (or a string holding one), got ${JSON.stringify(issue.input)}` : undefined;
  const number = integer ? z.int({ error }).min(low).max(high) : z.number({ error }).min(low).max(high);
  const fromText = (value: unknown): unknown => (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)) ? Number(value) : value);
  return z.preprocess(fromText, number).nullish();
}

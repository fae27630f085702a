import { z } from 'zod';
import { MAX_JSON_DEPTH, nestedDeeperThan } from '../../config/json-nesting.js';

/**
 * `chat_template_kwargs`: an object of the template's own variables (`enable_thinking`),
 * or that object as JSON text, which Xinference's client and server accept (its
 * `_coerce_chat_template_kwargs`): a request written for Xinference with the text form
 * was a 400 here until 2026-11-29. Text that is not a JSON object is refused as the
 * object would be, and so is nesting past the body's own limit.
 */
export const chatTemplateKwargs = z
  .preprocess((value) => (typeof value === 'string' ? objectFromText(value) : value), z.record(z.string(), z.unknown(), { error: 'expected an object of template variables, or its JSON text' }))
  .nullish();

function objectFromText(text: string): unknown {
  if (text.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(text);
    if (nestedDeeperThan(value, MAX_JSON_DEPTH)) return text;
    return value;
  } catch {
    return text;
  }
}

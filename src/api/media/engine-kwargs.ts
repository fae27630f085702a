import { HangarError } from '../../errors/hangar-error.js';

/**
 * Xinference's `kwargs` field: extra engine arguments as a JSON string (multipart
 * forms can carry nothing else) or, in JSON bodies, an object.
 */
export function engineKwargs(value: unknown): Record<string, unknown> {
  if (value === undefined || value === null || value === '') return {};
  let parsed: unknown = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value);
    } catch (err) {
      throw new HangarError('invalid_field', [`kwargs: must be a JSON object: ${(err as Error).message}`], { param: 'kwargs' });
    }
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new HangarError('invalid_field', ['kwargs: must be a JSON object'], { param: 'kwargs' });
  }
  return parsed as Record<string, unknown>;
}

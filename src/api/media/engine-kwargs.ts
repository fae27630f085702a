import { HangarError } from '../../errors/hangar-error.js';

/**
 * Xinference's `kwargs` field: extra engine arguments as a JSON string (multipart
 * forms can carry nothing else) or, in JSON bodies, an object. `own` names what the
 * request itself gives the engine (the uploaded audio, the text to speak): a kwarg of
 * that name is refused here, where it reached the engine as a second value and was
 * answered in Python's words (`transcribe() got multiple values for argument 'audio'`).
 */
export function engineKwargs(value: unknown, own: Readonly<Record<string, string>> = {}): Record<string, unknown> {
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
  for (const [name, field] of Object.entries(own)) {
    if (Object.hasOwn(parsed, name)) {
      throw new HangarError('invalid_field', [`kwargs.${name}: is what the request's ${field} gives the engine; it cannot be set in kwargs`], { param: `kwargs.${name}` });
    }
  }
  return parsed as Record<string, unknown>;
}

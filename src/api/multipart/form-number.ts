import { z } from 'zod';

/** A decimal number as a person or an SDK writes one in a form field (not hex, not empty). */
export const DECIMAL = /^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/;

/**
 * A number from a form field (a multipart body's fields are text). zod's coerce reads
 * with Number(), which takes `""` as 0 and `0x1` as 1: a field sent empty or in hex
 * passed as another number. Only decimal text is read; anything else fails as not a
 * number, naming the field.
 */
export function formNumber<T extends z.ZodType>(schema: T) {
  return z.preprocess((value) => (typeof value === 'string' && DECIMAL.test(value.trim()) ? Number(value) : value), schema);
}

/**
 * Model sizes in billions arrive as numbers (`7`), Xinference strings with `_` for
 * the decimal point (`"0_5"`), or, from users, decimal strings (`"0.5"`). Records
 * keep what their file says; matching compares the values.
 */
export function modelSizeValue(size: number | string): number {
  if (typeof size === 'number') return size;
  const text = size.trim().replace('_', '.');
  // Number('') is 0, which would match nothing sensible; treat it as not a size.
  return text === '' ? Number.NaN : Number(text);
}

export function sameModelSize(a: number | string, b: number | string): boolean {
  const x = modelSizeValue(a);
  return !Number.isNaN(x) && x === modelSizeValue(b);
}

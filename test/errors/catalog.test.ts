import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { catalog } from '../../src/errors/catalog.js';
import { HangarError, errorBody, formatMessage } from '../../src/errors/hangar-error.js';

const docs = readFileSync(path.join(import.meta.dirname, '..', '..', 'docs', 'errors.md'), 'utf8');
// Rows look like: | `model_not_found` | 404 | not_found_error | ... |
const documented = new Map<string, { status: number; type: string }>();
for (const match of docs.matchAll(/^\|\s*`([a-z_]+)`\s*\|\s*(\d{3})\s*\|\s*([a-z_]+)\s*\|/gm)) {
  documented.set(match[1]!, { status: Number(match[2]), type: match[3]! });
}

describe('error catalog and docs/errors.md', () => {
  it('documents every code with its status and type', () => {
    for (const [code, entry] of Object.entries(catalog)) {
      expect(documented.get(code), `docs/errors.md lacks ${code}`).toEqual({ status: entry.status, type: entry.type });
    }
  });

  it('documents no code the catalog lacks', () => {
    for (const code of documented.keys()) expect(Object.keys(catalog), `docs/errors.md lists unknown ${code}`).toContain(code);
  });
});

describe('HangarError', () => {
  it('fills the template and builds the contract body', () => {
    const err = new HangarError('model_not_found', ['foo'], { param: 'model' });
    expect(err.status).toBe(404);
    expect(errorBody(err)).toEqual({
      detail: 'Model not found in the model list, uid: foo',
      error: { message: 'Model not found in the model list, uid: foo', type: 'not_found_error', param: 'model', code: 'model_not_found' },
    });
  });

  it('leaves a placeholder visible when an argument is missing', () => {
    expect(formatMessage('a %s b %s', ['x'])).toBe('a x b %s');
  });
});

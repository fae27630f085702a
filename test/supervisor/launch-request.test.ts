import { describe, expect, it } from 'vitest';
import { launchKey, type LaunchRequest } from '../../src/supervisor/launch-request.js';

const base: LaunchRequest = { model_name: 'm', model_type: 'flexible', replica: 1, n_gpu: 'auto', envs: {}, engine_kwargs: { a: 1, b: { y: 2, x: 1 } } };

describe('launchKey', () => {
  it('ignores key order and the uid', () => {
    const reordered: LaunchRequest = { engine_kwargs: { b: { x: 1, y: 2 }, a: 1 }, envs: {}, n_gpu: 'auto', replica: 1, model_type: 'flexible', model_name: 'm', model_uid: 'other' };
    expect(launchKey(reordered)).toBe(launchKey(base));
  });

  it('tells different parameters apart', () => {
    expect(launchKey({ ...base, replica: 2 })).not.toBe(launchKey(base));
    expect(launchKey({ ...base, engine_kwargs: { a: 2, b: { y: 2, x: 1 } } })).not.toBe(launchKey(base));
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { hubEnvironment } from '../../src/supervisor/memory-accounting.js';
import { heldBy } from '../../src/supervisor/memory-budget.js';
import type { ModelInstance } from '../../src/supervisor/model-instance.js';

describe('where the memory estimate asks the hub', () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
  });

  it('takes the launch envs over the service environment, but never sends the service token to a hub the launch names', () => {
    process.env.HF_TOKEN = 'service-secret';
    process.env.HF_ENDPOINT = 'https://hub.internal';
    expect(hubEnvironment({})).toMatchObject({ HF_ENDPOINT: 'https://hub.internal', HF_TOKEN: 'service-secret' });
    const chosen = hubEnvironment({ HF_ENDPOINT: 'http://elsewhere.example' });
    expect(chosen.HF_ENDPOINT).toBe('http://elsewhere.example');
    expect(chosen.HF_TOKEN).toBeUndefined();
    expect(hubEnvironment({ HF_ENDPOINT: 'http://elsewhere.example', HF_TOKEN: 'theirs' }).HF_TOKEN).toBe('theirs');
  });
});

describe('what a model holds of the budget', () => {
  it('is never NaN: an estimate or a measure that is no number counts as nothing, the other still counts', () => {
    const instance = (host: number, rss: number | undefined) => ({ charge: { host, gpus: {} }, replicas: [{ runtime: { stats: { rssBytes: rss } } }] }) as unknown as ModelInstance;
    expect(heldBy(instance(Number.NaN, 400e6)).host).toBe(400e6);
    expect(heldBy(instance(500e6, Number.NaN)).host).toBe(500e6);
    expect(heldBy(instance(-4e12, undefined)).host).toBe(0);
    expect(heldBy(instance(500e6, 700e6)).host).toBe(700e6);
  });
});

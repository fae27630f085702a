import { afterEach, describe, expect, it } from 'vitest';
import { hubEnvironment } from '../../src/supervisor/memory-accounting.js';

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

import { describe, expect, it } from 'vitest';
import { listedLaunch } from '../../src/api/models/launch-listing.js';
import type { LaunchRequest } from '../../src/supervisor/launch-request.js';

describe('a kept launch as listed to models:list', () => {
  it('hides every variable, and the engine options named like credentials', () => {
    const request = {
      model_name: 'm',
      model_type: 'LLM',
      envs: { HF_TOKEN: 'hf_ENV', OMP_NUM_THREADS: '2' },
      engine_kwargs: { hf_token: 'hf_KW', api_key: 'sk-x', password: 'pw', client_secret: 's', temperature: 0.5, max_model_len: 4096, tokenizer_mode: 'mistral', max_num_batched_tokens: 8192 },
    } as unknown as LaunchRequest;
    const listed = listedLaunch(request);
    expect(listed.envs).toEqual({ HF_TOKEN: '[redacted]', OMP_NUM_THREADS: '[redacted]' });
    // Settings whose names hold such a word as a piece are settings: shown.
    expect(listed.engine_kwargs).toEqual({ hf_token: '[redacted]', api_key: '[redacted]', password: '[redacted]', client_secret: '[redacted]', temperature: 0.5, max_model_len: 4096, tokenizer_mode: 'mistral', max_num_batched_tokens: 8192 });
    expect(JSON.stringify(listed)).not.toMatch(/hf_ENV|hf_KW|sk-x|"pw"/);
    // The kept request itself is untouched (it is what a restart launches).
    expect(request.engine_kwargs.hf_token).toBe('hf_KW');
  });
});

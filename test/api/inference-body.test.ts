import { describe, expect, it } from 'vitest';
import { wantedTokens } from '../../src/api/inference-body.js';

// What key admission (a tokens-per-minute limit) and request progress expect a request
// to generate at most: the per-choice limit times its choices, as OpenAI estimates it.
describe('wantedTokens', () => {
  it('takes each spelling of the limit', () => {
    expect(wantedTokens({ max_tokens: 10 })).toBe(10);
    expect(wantedTokens({ max_completion_tokens: 7, max_tokens: 10 })).toBe(7);
    expect(wantedTokens({ max_output_tokens: 5 })).toBe(5);
    expect(wantedTokens({})).toBeNull();
    expect(wantedTokens({ max_tokens: 0 })).toBeNull();
  });

  it('multiplies by n and by the prompts of a completions list', () => {
    expect(wantedTokens({ max_tokens: 10, n: 3 })).toBe(30);
    expect(wantedTokens({ max_tokens: 10, prompt: ['a', 'b'] })).toBe(20);
    expect(wantedTokens({ max_tokens: 10, prompt: ['a', 'b'], n: 2 })).toBe(40);
    expect(wantedTokens({ max_tokens: 10, prompt: 'a', n: 1 })).toBe(10);
    // Token ids: a list of lists is several prompts, a flat list one.
    expect(wantedTokens({ max_tokens: 10, prompt: [[1, 2], [3]] })).toBe(20);
    expect(wantedTokens({ max_tokens: 10, prompt: [1, 2, 3], n: 2 })).toBe(20);
  });

  it('counts no more than the model\'s context per choice (Claude Code sends max_tokens of 32k and more)', () => {
    expect(wantedTokens({ max_tokens: 64_000 }, 4096)).toBe(4096);
    expect(wantedTokens({ max_tokens: 64_000, n: 2 }, 4096)).toBe(8192);
    expect(wantedTokens({ max_tokens: 100 }, 4096)).toBe(100);
    expect(wantedTokens({ max_tokens: 64_000 }, null)).toBe(64_000);
  });

  it('counts a body the schema will refuse as one choice', () => {
    expect(wantedTokens({ max_tokens: 10, n: 2.5 })).toBe(10);
    expect(wantedTokens({ max_tokens: 10, n: -4 })).toBe(10);
    expect(wantedTokens({ max_tokens: 10, prompt: [[1, 2], 3] })).toBe(10);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { sumUsage } from '../../src/api/llm/choice-usage.js';
import { buildTestApp } from './test-app.js';

// OpenAI's and vLLM's `prompt` on /v1/completions: a string or a list of strings. The
// list's answers are checked against a real engine in test/integration/llm-openai.test.ts;
// here, what is refused and how, and how usage adds up.
describe('a list of prompts on /v1/completions', () => {
  let app: FastifyInstance;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ app, close } = await buildTestApp(null));
  });
  afterAll(async () => close());

  const refusal = async (body: Record<string, unknown>): Promise<[number, string | null, string]> => {
    const res = await app.inject({ method: 'POST', url: '/v1/completions', payload: { model: 'absent', max_tokens: 3, ...body } });
    const json = res.json();
    expect(json.error.code).toBe('invalid_field');
    return [res.statusCode, json.error.param, json.error.message];
  };

  it('refuses an empty list, a mixed list, bad token ids, and a value of no prompt type, naming the field', async () => {
    expect(await refusal({ prompt: [] })).toEqual([400, 'prompt', 'prompt: the list is empty']);
    expect(await refusal({ prompt: ['fine', null] })).toEqual([400, 'prompt.1', 'prompt.1: must be text, as the first prompt of the list is']);
    expect(await refusal({ prompt: [[1, 2], []] })).toEqual([400, 'prompt.1', 'prompt.1: the token list is empty: send at least one token id']);
    expect(await refusal({ prompt: [5, -1] })).toEqual([400, 'prompt.1', 'prompt.1: a token id is never negative']);
    expect(await refusal({ prompt: [5, 1.5] })).toEqual([400, 'prompt.1', 'prompt.1: must be a token id (an integer from 0)']);
    expect(await refusal({ prompt: [[5], [2 ** 40]] })).toEqual([400, 'prompt.1.0', expect.stringMatching(/^prompt\.1\.0: /)]);
    expect(await refusal({ prompt: 5 })).toEqual([400, 'prompt', 'prompt: Invalid input: expected string or array, received number']);
    expect(await refusal({ prompt: { text: 'x' } })).toEqual([400, 'prompt', 'prompt: Invalid input: expected string or array, received object']);
    expect(await refusal({ prompt: [[1], 'x'] })).toEqual([400, 'prompt.1', 'prompt.1: must be a list of token ids, as the first prompt of the list is']);
    expect(await refusal({ prompt: [1, [2]] })).toEqual([400, 'prompt.1', 'prompt.1: must be a token id (an integer from 0)']);
  });

  it('takes token ids, one list or several, as far as the model lookup', async () => {
    for (const prompt of [[1, 2, 3], [[1], [2, 3]]]) {
      const res = await app.inject({ method: 'POST', url: '/v1/completions', payload: { model: 'absent', prompt } });
      expect([res.statusCode, res.json().error.code]).toEqual([404, 'model_not_found']);
    }
  });

  it('refuses more than 128 prompts, and more than 256 choices in all, before looking the model up', async () => {
    expect(await refusal({ prompt: Array.from({ length: 129 }, () => 'x') })).toEqual([400, 'prompt', 'prompt: a list of at most 128 entries']);
    expect(await refusal({ prompt: ['a', 'b', 'c'], n: 100 })).toEqual([400, 'n', 'n: 3 prompts × n 100 would be 300 choices; at most 256 per request']);
    // Within both limits the body is fine: the model is what is missing.
    const res = await app.inject({ method: 'POST', url: '/v1/completions', payload: { model: 'absent', prompt: ['a', 'b'], n: 128 } });
    expect([res.statusCode, res.json().error.code]).toEqual([404, 'model_not_found']);
  });
});

describe('usage of several choices', () => {
  it('counts each prompt once and every choice', () => {
    // Two prompts (5 and 7 tokens), two choices each.
    const usages = [
      { prompt_tokens: 5, completion_tokens: 3 },
      { prompt_tokens: 5, completion_tokens: 4 },
      { prompt_tokens: 7, completion_tokens: 1 },
      { prompt_tokens: 7, completion_tokens: 2 },
    ];
    expect(sumUsage(usages, 2)).toEqual({ prompt_tokens: 12, completion_tokens: 10, total_tokens: 22 });
    expect(sumUsage(usages, 1)).toEqual({ prompt_tokens: 24, completion_tokens: 10, total_tokens: 34 });
    expect(sumUsage(usages, 4)).toEqual({ prompt_tokens: 5, completion_tokens: 10, total_tokens: 15 });
  });

  it('counts nothing for a choice whose engine gave no usage', () => {
    expect(sumUsage([null, { prompt_tokens: 2, completion_tokens: 2 }], 1)).toEqual({ prompt_tokens: 2, completion_tokens: 2, total_tokens: 4 });
  });
});

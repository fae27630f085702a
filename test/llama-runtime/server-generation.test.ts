import { describe, expect, it } from 'vitest';
import { parseGenerateConfig } from '../../src/llama-runtime/engine/generate-config.js';
import type { GenerationRequest } from '../../src/llama-runtime/engine/generation.js';
import { ServerCompletion } from '../../src/llama-runtime/engine/server-generation.js';
import type { LlamaServerProcess } from '../../src/llama-runtime/engine/llama-server-process.js';

/**
 * The request llama-server gets for a call (issue 39; docs/runtime-protocol.md, "llama-server
 * as the engine process"): the fields its `/completion` documents, with the defaults that
 * differ from OpenAI's turned off. What the server does with them is
 * test/integration/llama-cpp.test.ts's, which runs on llama-server.
 */
function bodyFor(config: Record<string, unknown>, extra: Partial<GenerationRequest> = {}): Record<string, unknown> {
  const request: GenerationRequest = {
    promptIds: [1, 5, 9] as never,
    config: parseGenerateConfig(config),
    maxTokens: 16,
    stop: [],
    stopTokenIds: new Set(),
    toolFormat: null,
    keepTokens: new Set(),
    harmony: false,
    reasoningTags: null,
    reasoningOpen: false,
    echo: '',
    grammar: null,
    ...extra,
  };
  // body() is the request alone: no server is asked.
  return new ServerCompletion(null as unknown as LlamaServerProcess, request).body();
}

describe('a call as llama-server /completion request', () => {
  it('sends token ids, streams token ids, and turns llama-server\'s own penalty default off', () => {
    const body = bodyFor({ temperature: 0.7, top_p: 0.9, top_k: 40, min_p: 0.05, seed: 7 });
    expect(body).toMatchObject({
      prompt: [1, 5, 9],
      n_predict: 16,
      stream: true,
      return_tokens: true,
      cache_prompt: true,
      temperature: 0.7,
      top_p: 0.9,
      top_k: 40,
      min_p: 0.05,
      seed: 7,
      repeat_penalty: 1,
      repeat_last_n: 0,
      ignore_eos: false,
      n_probs: 0,
      logit_bias: [],
    });
    expect(body).not.toHaveProperty('grammar');
  });

  it('samples greedily below a tiny temperature or with top_k 1, with the model\'s softmax as log-probabilities', () => {
    for (const config of [{ temperature: 0 }, { temperature: 1e-300 }, { temperature: 1, top_k: 1 }]) {
      expect(bodyFor({ ...config, logprobs: true, top_logprobs: 3 })).toMatchObject({ temperature: -1, n_probs: 3, post_sampling_probs: false });
    }
    expect(bodyFor({ temperature: 0.8, logprobs: true })).toMatchObject({ n_probs: 1, post_sampling_probs: true });
  });

  it('passes penalties over the generated tokens, logit_bias as pairs, ignore_eos and the grammar\'s GBNF', () => {
    const body = bodyFor(
      { repetition_penalty: 1.3, frequency_penalty: 0.5, presence_penalty: -0.5, logit_bias: { '7': -100, '2': 5 }, ignore_eos: true },
      { grammar: { grammar: 'root ::= "a"' } as never, maxTokens: 200 },
    );
    expect(body).toMatchObject({ repeat_penalty: 1.3, repeat_last_n: 200, frequency_penalty: 0.5, presence_penalty: -0.5, ignore_eos: true, grammar: 'root ::= "a"' });
    expect(new Map(body.logit_bias as Array<[number, number]>)).toEqual(new Map([[7, -100], [2, 5]]));
    // Without a seed each call draws one, as node-llama-cpp does.
    expect(Number.isInteger(bodyFor({}).seed)).toBe(true);
  });
});

import { execFileSync } from 'node:child_process';
import OpenAI from 'openai';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { venvPython } from './harness/server.js';
import { tinyLlm } from './harness/tiny-models.js';

// Token-id prompts, and echo with logprobs (the log-probabilities of the prompt's own
// tokens), as lm-evaluation-harness's `local-completions` model asks them of an
// OpenAI-compatible server for log-likelihoods; on the shared server's `tiny`
// (Transformers), `lc` (the same weights on llama.cpp) and `sim` (the simulator).
describe('token-id prompts and prompt log-probabilities on /v1/completions', () => {
  const server = { url: inject('sharedServerUrl') };
  let sdk: OpenAI;
  const tiny = tinyLlm();
  const text = 'The quick brown fox jumps over the lazy dog';
  let ids: number[];
  let decoded: string;

  beforeAll(() => {
    sdk = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'not-needed', maxRetries: 0, timeout: 60_000 });
    // The model's own tokenizer, as lm-evaluation-harness loads it (tokenizer_backend=huggingface).
    const script = 'import json, sys\nfrom transformers import AutoTokenizer\nt = AutoTokenizer.from_pretrained(sys.argv[1])\n'
      + 'ids = t(sys.argv[2])["input_ids"]\nprint(json.dumps({"ids": ids, "text": t.decode(ids)}))';
    const out = JSON.parse(execFileSync(venvPython, ['-c', script, tiny.path, text], { encoding: 'utf8', timeout: 120_000 }).trim().split('\n').pop()!);
    ({ ids, text: decoded } = out);
    expect(ids.length).toBeGreaterThan(6);
  });

  it.each(['tiny', 'lc'])('answers token ids as the same prompt given as text on %s', async (model) => {
    const params = { model, max_tokens: 8, temperature: 0 } as const;
    const byText = await sdk.completions.create({ ...params, prompt: text });
    const byIds = await sdk.completions.create({ ...params, prompt: ids });
    expect(byIds.choices[0]!.text).toBe(byText.choices[0]!.text);
    expect(byIds.usage).toEqual(byText.usage);
    expect(byIds.usage!.prompt_tokens).toBe(ids.length);
    // echo of token ids gives their text back (the BOS token as its text), then the answer.
    const echoed = await sdk.completions.create({ ...params, prompt: ids, echo: true });
    expect(echoed.choices[0]!.text).toBe(decoded + byText.choices[0]!.text);
  });

  it('answers lm-evaluation-harness\'s log-likelihood request: every prompt token scored, the first with null', async () => {
    // lm_eval/models/openai_completions.py, LocalCompletionsAPI._create_payload(generate=False), for two requests.
    const contexts = [ids, ids.slice(0, 4)];
    const res = await sdk.completions.create({ model: 'tiny', prompt: contexts, temperature: 0, max_tokens: 1, logprobs: 1, seed: 1234, echo: true });
    expect(res.choices.map((c) => c.index)).toEqual([0, 1]);
    for (const [i, choice] of res.choices.entries()) {
      const lp = choice.logprobs!;
      const context = contexts[i]!;
      expect(lp.tokens!.length).toBe(context.length + 1);
      expect(lp.token_logprobs![0]).toBeNull();
      expect(lp.top_logprobs![0]).toBeNull();
      // text_offset runs over the echoed text from 0, token by token.
      expect(lp.text_offset![0]).toBe(0);
      // In code points; a `bytes:\xNN` token is part of a character, not its spelling's length (text-offsets.ts).
      for (let t = 1; t < lp.tokens!.length; t++) {
        const previous = lp.tokens![t - 1]!;
        if (!previous.startsWith('bytes:')) expect(lp.text_offset![t]).toBe(lp.text_offset![t - 1]! + [...previous].length);
      }
      // lm-eval's parse_logprobs: the sum over the continuation, and whether each token was the likeliest.
      const scored = lp.token_logprobs!.slice(1, -1) as number[];
      for (const [t, value] of scored.entries()) {
        expect(value).toBeLessThanOrEqual(0);
        expect(value).toBeLessThanOrEqual(Math.max(...Object.values(lp.top_logprobs![t + 1]!)) + 1e-6);
      }
      expect(usageOk(res.usage)).toBe(true);
    }
    expect(res.usage!.prompt_tokens).toBe(contexts[0]!.length + contexts[1]!.length);
  });

  it('scores each prompt token as a generation from the tokens before it would', async () => {
    const scored = (await sdk.completions.create({ model: 'tiny', prompt: ids, temperature: 0, max_tokens: 1, logprobs: 2, echo: true })).choices[0]!.logprobs!;
    for (const k of [1, 3, ids.length - 1]) {
      // The next token after ids[:k], chosen greedily, is the likeliest at place k.
      const next = (await sdk.completions.create({ model: 'tiny', prompt: ids.slice(0, k), temperature: 0, max_tokens: 1, logprobs: 2 })).choices[0]!.logprobs!;
      const [nextTop, scoredTop] = [next.top_logprobs![0]!, scored.top_logprobs![k]!];
      // The two likeliest, then the prompt's own token where it is not one of them ("up to logprobs+1").
      expect(Object.keys(scoredTop).slice(0, 2)).toEqual(Object.keys(nextTop));
      for (const token of Object.keys(nextTop)) expect(scoredTop[token]).toBeCloseTo(nextTop[token]!, 4);
      expect(scoredTop[scored.tokens![k]!]).toBe(scored.token_logprobs![k]);
    }
    // Sampled, a token outside the likeliest is still in its place's map, as OpenAI and vLLM answer.
    const sampled = (await sdk.completions.create({ model: 'tiny', prompt: 'Hello world', temperature: 1, seed: 5, max_tokens: 12, logprobs: 1 })).choices[0]!.logprobs!;
    sampled.tokens!.forEach((token, i) => expect(sampled.top_logprobs![i]![token], token).toBe(sampled.token_logprobs![i]));
    expect(sampled.top_logprobs!.some((map) => Object.keys(map!).length === 2)).toBe(true);
    // The token after the whole prompt is the generated one, scored as usual.
    const whole = (await sdk.completions.create({ model: 'tiny', prompt: ids, temperature: 0, max_tokens: 1, logprobs: 2 })).choices[0]!.logprobs!;
    expect(scored.tokens!.at(-1)).toBe(whole.tokens![0]);
    expect(scored.token_logprobs!.at(-1)).toBeCloseTo(whole.token_logprobs![0]!, 4);
  });

  it('streams the same entries it answers at once', async () => {
    const params = { model: 'tiny', prompt: text, temperature: 0, max_tokens: 4, logprobs: 1, echo: true } as const;
    const answer = await sdk.completions.create(params);
    const whole = answer.choices[0]!;
    let streamed = '';
    const tokens: string[] = [];
    const values: Array<number | null> = [];
    let first = true;
    for await (const chunk of await sdk.completions.create({ ...params, stream: true })) {
      const choice = chunk.choices[0];
      if (!choice) continue;
      if (first) {
        // The first event is the echoed prompt, carrying its own tokens' entries and no others.
        expect(choice.text).toBe(text);
        expect(choice.logprobs!.tokens!.length).toBe(answer.usage!.prompt_tokens);
        first = false;
      }
      streamed += choice.text;
      tokens.push(...(choice.logprobs?.tokens ?? []));
      values.push(...(choice.logprobs?.token_logprobs ?? []));
    }
    expect(streamed).toBe(whole.text);
    expect(whole.text.startsWith(text)).toBe(true);
    expect(tokens).toEqual(whole.logprobs!.tokens);
    // The same entries to float precision: a decode step batched with another file's calls
    // on this shared model sums in another order (the 7th digit moved once in CI).
    const expected = whole.logprobs!.token_logprobs!;
    expect(values.length).toBe(expected.length);
    values.forEach((value, i) => {
      if (value === null || expected[i] === null) expect(value, `entry ${i}`).toBe(expected[i]);
      else expect(value, `entry ${i}`).toBeCloseTo(expected[i]!, 4);
    });
  });

  it('refuses echo with logprobs on llama.cpp and the simulator, and token ids outside the vocabulary, naming the field', async () => {
    const refused = async (body: Record<string, unknown>): Promise<[number, string, string]> => {
      const res = await fetch(`${server.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ max_tokens: 1, ...body }) });
      const json = (await res.json()) as { error: { code: string; param: string; message: string } };
      return [res.status, json.error.code, json.error.param];
    };
    for (const model of ['lc', 'sim']) expect(await refused({ model, prompt: text, echo: true, logprobs: 1 })).toEqual([400, 'parameter_unsupported', 'echo']);
    for (const model of ['tiny', 'lc']) {
      expect(await refused({ model, prompt: [1, tiny.vocab_size] })).toEqual([400, 'inference_invalid_input', 'prompt']);
    }
    // echo alone and logprobs alone still work there.
    const echoed = await sdk.completions.create({ model: 'lc', prompt: text, echo: true, max_tokens: 2, temperature: 0 });
    expect(echoed.choices[0]!.text.startsWith(text)).toBe(true);
  });
});

function usageOk(usage: OpenAI.CompletionUsage | undefined): boolean {
  return !!usage && usage.total_tokens === usage.prompt_tokens + usage.completion_tokens;
}

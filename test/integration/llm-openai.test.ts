import { execFileSync } from 'node:child_process';
import OpenAI from 'openai';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { client } from './harness/http.js';
import { waitFor } from './harness/processes.js';
import { venvPython } from './harness/server.js';
import { sharedServerLogs } from './harness/shared-server.js';
import { tinyLlm, tinyLlmRegistration } from './harness/tiny-models.js';

// A tiny real Llama served by the Transformers engine, driven by both official OpenAI SDKs,
// on the server the `shared` project's files share (harness/shared-server.ts: `tiny`).
describe('LLM serving through the OpenAI SDKs', () => {
  const server = { url: inject('sharedServerUrl') };
  let sdk: OpenAI;
  const greedy = { temperature: 0 } as const;

  beforeAll(() => {
    sdk = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'not-needed', maxRetries: 0, timeout: 60_000 });
  });

  it('lists the model', async () => {
    const models = await sdk.models.list();
    const tiny = models.data.find((m) => m.id === 'tiny') as any;
    expect(tiny).toBeTruthy();
    expect(tiny.model_type).toBe('LLM');
    expect(tiny.model_ability).toEqual(expect.arrayContaining(['chat', 'generate']));
  });

  it('chats without streaming, honouring max_tokens exactly and counting usage', async () => {
    const res = await sdk.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: 'Hello there, how are you?' }], max_tokens: 12, ...greedy });
    expect(res.object).toBe('chat.completion');
    const choice = res.choices[0]!;
    expect(typeof choice.message.content).toBe('string');
    expect(res.usage!.total_tokens).toBe(res.usage!.prompt_tokens + res.usage!.completion_tokens);
    expect(res.usage!.prompt_tokens).toBeGreaterThan(5);
    if (choice.finish_reason === 'length') expect(res.usage!.completion_tokens).toBe(12);
    else expect(res.usage!.completion_tokens).toBeLessThanOrEqual(12);
  });

  it('streams the same text it answers without streaming, ending with usage', async () => {
    const params = { model: 'tiny', messages: [{ role: 'user' as const, content: 'Tell me a story' }], max_tokens: 16, ...greedy };
    const whole = await sdk.chat.completions.create(params);
    const stream = await sdk.chat.completions.create({ ...params, stream: true, stream_options: { include_usage: true } });
    let text = '';
    let finish: string | null = null;
    let usage: any = null;
    let chunks = 0;
    for await (const chunk of stream) {
      chunks++;
      if (chunk.choices.length > 0) {
        text += chunk.choices[0]!.delta.content ?? '';
        finish = chunk.choices[0]!.finish_reason ?? finish;
      }
      if (chunk.usage) usage = chunk.usage;
    }
    expect(chunks).toBeGreaterThan(2);
    expect(text).toBe(whole.choices[0]!.message.content);
    expect(finish).toBe(whole.choices[0]!.finish_reason);
    expect(usage).toEqual(whole.usage);
  });

  it('ends the text before a stop string', async () => {
    const params = { model: 'tiny', messages: [{ role: 'user' as const, content: 'Count with me' }], max_tokens: 24, ...greedy };
    const full = (await sdk.chat.completions.create(params)).choices[0]!.message.content!;
    expect(full.length).toBeGreaterThan(6);
    const stop = full.slice(Math.floor(full.length / 2), Math.floor(full.length / 2) + 3);
    const cut = await sdk.chat.completions.create({ ...params, stop: [stop] });
    expect(cut.choices[0]!.message.content).toBe(full.slice(0, full.indexOf(stop)));
    expect(cut.choices[0]!.finish_reason).toBe('stop');
    // vLLM's stop_reason names the string; streamed, on the last chunk.
    expect((cut.choices[0] as any).stop_reason).toBe(stop);
    const stream = await sdk.chat.completions.create({ ...params, stop: ['zzqq', stop], stream: true });
    let last: any = null;
    for await (const chunk of stream) if (chunk.choices[0]?.finish_reason) last = chunk.choices[0];
    expect(last.finish_reason).toBe('stop');
    expect(last.stop_reason).toBe(stop);
    const completion = await sdk.completions.create({ model: 'tiny', prompt: 'Count with me', max_tokens: 24, ...greedy });
    const text = completion.choices[0]!.text;
    expect(text.length).toBeGreaterThan(6);
    const textStop = text.slice(Math.floor(text.length / 2), Math.floor(text.length / 2) + 3);
    const cutText = await sdk.completions.create({ model: 'tiny', prompt: 'Count with me', max_tokens: 24, stop: textStop, ...greedy });
    expect(cutText.choices[0]!.text).toBe(text.slice(0, text.indexOf(textStop)));
    expect((cutText.choices[0] as any).stop_reason).toBe(textStop);
  });

  it('says stop_reason null when the length ended the answer', async () => {
    const res = await sdk.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: 'Tell me a story' }], max_tokens: 3, ignore_eos: true, ...greedy } as any);
    expect(res.choices[0]!.finish_reason).toBe('length');
    expect((res.choices[0] as any).stop_reason).toBeNull();
  });

  it.each(['tiny', 'lc'])('names the request\'s own stop token in stop_reason, as vLLM does, on %s', async (model) => {
    const params = { model, prompt: 'Once upon a time', ...greedy };
    // The greedy first token's id, by the model's own tokenizer (vLLM's /tokenize route).
    const first = (await sdk.completions.create({ ...params, max_tokens: 1 })).choices[0]!.text;
    const tokenize = await fetch(`${server.url}/tokenize`, { method: 'POST', body: JSON.stringify({ model, prompt: first, add_special_tokens: false }), headers: { 'content-type': 'application/json' } });
    const ids = ((await tokenize.json()) as { tokens: number[] }).tokens;
    expect(ids).toHaveLength(1);
    const stop = ids[0]!;
    const cut = (await sdk.completions.create({ ...params, max_tokens: 8, stop_token_ids: [stop] } as any)).choices[0]! as any;
    expect([cut.text, cut.finish_reason, cut.stop_reason]).toEqual(['', 'stop', stop]);
    // Streamed, on the finishing event; an end token of the model, or the length, says null.
    const events: any[] = [];
    const stream = (await sdk.completions.create({ ...params, max_tokens: 8, stop_token_ids: [stop], stream: true } as any)) as unknown as AsyncIterable<{ choices: unknown[] }>;
    for await (const chunk of stream) events.push(...chunk.choices);
    expect(events.at(-1)).toMatchObject({ finish_reason: 'stop', stop_reason: stop });
    const long = (await sdk.completions.create({ ...params, max_tokens: 2, ignore_eos: true } as any)).choices[0]! as any;
    expect([long.finish_reason, long.stop_reason]).toEqual(['length', null]);
  });

  it('completes text, streaming and not', async () => {
    const res = await sdk.completions.create({ model: 'tiny', prompt: 'Once upon a time', max_tokens: 8, ...greedy });
    expect(res.object).toBe('text_completion');
    const stream = await sdk.completions.create({ model: 'tiny', prompt: 'Once upon a time', max_tokens: 8, stream: true, ...greedy });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.text ?? '';
    expect(text).toBe(res.choices[0]!.text);
  });

  it('takes enable_thinking given at launch as the model\'s default, which a request may still set', async () => {
    const api = client(server.url);
    const registration = tinyLlmRegistration('tiny-think', tinyLlm().path);
    const template = "{{ 'the model thinks step by step before it answers this question' if enable_thinking is defined and enable_thinking else 'no' }} {{ messages[-1].content }}";
    const model = { ...JSON.parse(registration.model), chat_template: template };
    expect((await api.post('/v1/model_registrations/LLM', { ...registration, model: JSON.stringify(model) })).status).toBe(200);
    const launched = await api.post('/v1/models', { model_name: 'tiny-think', model_engine: 'Transformers', model_uid: 'think', enable_thinking: true });
    expect(launched.status, launched.text).toBe(200);
    try {
      const promptTokens = async (extra: Record<string, unknown>) => {
        const res = await api.post('/v1/chat/completions', { model: 'think', messages: [{ role: 'user', content: 'hi' }], max_tokens: 1, ...extra });
        expect(res.status, res.text).toBe(200);
        return res.body.usage.prompt_tokens as number;
      };
      const byDefault = await promptTokens({});
      expect(await promptTokens({ enable_thinking: true })).toBe(byDefault);
      expect(await promptTokens({ enable_thinking: false })).toBeLessThan(byDefault);
      expect(await promptTokens({ chat_template_kwargs: { enable_thinking: false } })).toBeLessThan(byDefault);
    } finally {
      await api.delete('/v1/models/think');
      await api.delete('/v1/model_registrations/LLM/tiny-think');
    }
  });

  it('refuses tools on a model without the tools ability, naming it', async () => {
    const err = await sdk.chat.completions
      .create({
        model: 'tiny',
        messages: [{ role: 'user', content: 'Weather?' }],
        tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } }],
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as Error).message).toContain('tiny does not support tool calls');
  });

  it('refuses embeddings on an LLM without the embed ability, naming it and what it can do', async () => {
    const err = await sdk.embeddings.create({ model: 'tiny', input: 'hello' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as Error).message).toContain('tiny');
    expect((err as Error).message).toMatch(/chat/);
  });

  it('fails a built-in launch fast when the hub cannot be reached, saying how to use a local folder', async () => {
    const api = client(server.url);
    const res = await api.post('/v1/models', { model_name: 'qwen2.5-instruct', model_engine: 'Transformers', model_size_in_billions: '0_5', model_uid: 'offline' });
    expect(res.status, res.text).toBe(400);
    expect(res.body.detail).toContain('Qwen/Qwen2.5-0.5B-Instruct');
    expect(res.body.detail).toContain('model_path');
    expect((await api.get('/v1/models/instances?model_uid=offline')).body[0].status).toBe('ERROR');
  });

  it('answers an unknown model with the SDK not-found error', async () => {
    await expect(sdk.chat.completions.create({ model: 'nope', messages: [{ role: 'user', content: 'hi' }] })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('completes 8 concurrent streams, each with its own text in order', async () => {
    const prompts = Array.from({ length: 8 }, (_, i) => `Prompt number ${i} says`);
    const solo = [];
    for (const p of prompts) solo.push((await sdk.completions.create({ model: 'tiny', prompt: p, max_tokens: 10, ...greedy })).choices[0]!.text);
    const together = await Promise.all(
      prompts.map(async (p) => {
        let text = '';
        const stream = await sdk.completions.create({ model: 'tiny', prompt: p, max_tokens: 10, stream: true, ...greedy });
        for await (const chunk of stream) text += chunk.choices[0]?.text ?? '';
        return text;
      }),
    );
    expect(together).toEqual(solo);
  });

  // OpenAI's and vLLM's list of prompts: prompt p's n choices are numbered p·n to p·n + n − 1.
  it.each([['tiny', 'Transformers'], ['lc', 'llama.cpp']])('completes a list of prompts in one request on %s (%s), each as it would alone', async (model) => {
    const prompts = ['Once upon a time', 'The answer is', 'Hello'];
    const solo: OpenAI.Completion[] = [];
    for (const p of prompts) solo.push(await sdk.completions.create({ model, prompt: p, max_tokens: 6, ...greedy }));
    const res = await sdk.completions.create({ model, prompt: prompts, max_tokens: 6, n: 2, ...greedy });
    expect(res.choices.map((c) => c.index)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(res.choices.map((c) => c.text)).toEqual(solo.flatMap((s) => [s.choices[0]!.text, s.choices[0]!.text]));
    expect(res.choices.every((c) => c.finish_reason === solo[Math.floor(c.index / 2)]!.choices[0]!.finish_reason)).toBe(true);
    // Each prompt counted once, every choice's tokens counted.
    const prompt = solo.reduce((sum, s) => sum + s.usage!.prompt_tokens, 0);
    const completion = 2 * solo.reduce((sum, s) => sum + s.usage!.completion_tokens, 0);
    expect(res.usage).toEqual({ prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion });

    // Streamed: every event names its choice; the texts and the usage chunk are the same.
    const texts = new Map<number, string>();
    let usage: unknown = null;
    const stream = await sdk.completions.create({ model, prompt: prompts, max_tokens: 6, stream: true, stream_options: { include_usage: true }, ...greedy });
    for await (const chunk of stream) {
      for (const c of chunk.choices) texts.set(c.index, (texts.get(c.index) ?? '') + c.text);
      if (chunk.usage) usage = chunk.usage;
    }
    expect([...texts.keys()].sort()).toEqual([0, 1, 2]);
    expect([0, 1, 2].map((i) => texts.get(i))).toEqual(solo.map((s) => s.choices[0]!.text));
    const streamed = solo.reduce((sum, s) => sum + s.usage!.completion_tokens, 0);
    expect(usage).toEqual({ prompt_tokens: prompt, completion_tokens: streamed, total_tokens: prompt + streamed });
  });

  it('fails a list of prompts whole when one of them cannot be served, naming why', async () => {
    // The tiny model's context is 512 tokens: the second prompt is far past it.
    const long = 'word '.repeat(2000);
    const err = await sdk.completions.create({ model: 'tiny', prompt: ['Hello', long], max_tokens: 4, ...greedy }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).message).toMatch(/context|long|tokens/i);
  });

  it('stops generating for a client that goes away mid-stream', async () => {
    const api = client(server.url);
    const controller = new AbortController();
    const stream = await sdk.chat.completions.create(
      { model: 'tiny', messages: [{ role: 'user', content: 'Go on forever' }], max_tokens: 400, stream: true, ...greedy },
      { signal: controller.signal },
    );
    let seen = 0;
    try {
      for await (const _chunk of stream) if (++seen === 3) controller.abort();
    } catch {
      // The SDK may end the loop with an abort error; either way the client is gone.
    }
    expect(seen).toBeGreaterThanOrEqual(3);
    // The runtime itself says it dropped the call (its log lines reach ours with the uid).
    const aborted = await waitFor(async () => (await sharedServerLogs(inject('sharedServerLog'))).some((l) => l.model_uid === 'tiny' && l.source === 'runtime' && String(l.msg).includes('aborted')), 10_000);
    expect(aborted).toBe(true);
    const freed = await waitFor(async () => (await api.get('/v1/models/tiny/replicas')).body[0].in_flight === 0, 10_000);
    expect(freed).toBe(true);
    const next = await sdk.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: 'Still there?' }], max_tokens: 4, ...greedy });
    expect(next.choices[0]!.finish_reason).toBeTruthy();
  });

  it('works the same with the official Python SDK', () => {
    const script = `
import json, sys
from openai import OpenAI, NotFoundError
c = OpenAI(base_url=sys.argv[1] + "/v1", api_key="not-needed", max_retries=0)
out = {"models": [m.id for m in c.models.list().data]}
r = c.chat.completions.create(model="tiny", messages=[{"role": "user", "content": "Hi"}], max_tokens=6, temperature=0)
out["chat"] = r.choices[0].message.content
out["usage"] = r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens
s = c.chat.completions.create(model="tiny", messages=[{"role": "user", "content": "Hi"}], max_tokens=6, temperature=0, stream=True)
out["streamed"] = "".join((ch.choices[0].delta.content or "") for ch in s if ch.choices)
out["completion"] = c.completions.create(model="tiny", prompt="Hi", max_tokens=4, temperature=0).choices[0].text
b = c.completions.create(model="tiny", prompt=["Hi", "Yo"], max_tokens=4, temperature=0)
out["batch"] = [[ch.index, ch.text] for ch in b.choices]
out["yo"] = c.completions.create(model="tiny", prompt="Yo", max_tokens=4, temperature=0).choices[0].text
try:
    c.chat.completions.create(model="nope", messages=[{"role": "user", "content": "Hi"}])
    out["not_found"] = False
except NotFoundError:
    out["not_found"] = True
print(json.dumps(out))
`;
    const out = JSON.parse(execFileSync(venvPython, ['-c', script, server.url], { encoding: 'utf8', timeout: 120_000 }).trim().split('\n').pop()!);
    expect(out.models).toContain('tiny');
    expect(typeof out.chat).toBe('string');
    expect(out.streamed).toBe(out.chat);
    expect(out.usage).toBe(true);
    expect(typeof out.completion).toBe('string');
    expect(out.batch).toEqual([
      [0, out.completion],
      [1, out.yo],
    ]);
    expect(out.not_found).toBe(true);
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chatStreamFormat } from '../../src/api/chat/stream-events.js';
import { completionStreamFormat } from '../../src/api/completions/stream-events.js';
import { mergeGenerations } from '../../src/api/llm/generation-merge.js';
import type { Generation } from '../../src/api/llm/generate-config.js';

/** A runtime stream: one chunk per token (with its logprob), then the final chunk. */
const streams = fc
  .record({
    tokens: fc.array(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 60 }),
    finish: fc.constantFrom('stop', 'length', 'tool_calls'),
    withLogprobs: fc.boolean(),
    reasoningUntil: fc.nat({ max: 10 }),
  })
  .map(({ tokens, finish, withLogprobs, reasoningUntil }) => {
    const chunks: Generation[] = tokens.map((t, i) => ({
      text: i < reasoningUntil ? '' : t,
      ...(i < reasoningUntil ? { reasoning_content: t } : {}),
      ...(withLogprobs ? { logprobs: [{ token: t, logprob: -i / 10, bytes: null, top_logprobs: [] }] } : {}),
    }));
    const usage = { prompt_tokens: 3, completion_tokens: tokens.length, total_tokens: tokens.length + 3 };
    const tool_calls = finish === 'tool_calls' ? [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }] : undefined;
    chunks.push({ text: '', finish_reason: finish, usage, ...(tool_calls ? { tool_calls } : {}) });
    return { chunks, tokens, usage, finish, withLogprobs, reasoningUntil };
  });

/** The chunks cut into consecutive groups at random boundaries. */
function groups<T>(items: T[], cuts: number[]): T[][] {
  const at = [...new Set(cuts.map((c) => c % (items.length + 1)))].sort((a, b) => a - b);
  const out: T[][] = [];
  let from = 0;
  for (const cut of [...at, items.length]) {
    if (cut > from) out.push(items.slice(from, cut));
    from = Math.max(from, cut);
  }
  return out;
}

const parse = (events: string): Array<Record<string, any>> =>
  events
    .split('\n\n')
    .filter((e) => e.startsWith('data: '))
    .map((e) => JSON.parse(e.slice(6)) as Record<string, any>);

describe('merging stream chunks (coalescing)', () => {
  it('keeps the text, reasoning, logprobs, finish reason, usage and tool calls for any chunk boundaries (chat)', () => {
    fc.assert(
      fc.property(streams, fc.array(fc.nat(), { maxLength: 20 }), ({ chunks, tokens, usage, finish, withLogprobs, reasoningUntil }, cuts) => {
        const format = chatStreamFormat('m', true);
        const written = format.opening() + groups(chunks, cuts).map((g) => format.events(mergeGenerations(g))).join('') + format.closing();
        const events = parse(written);
        const deltas = events.filter((e) => e.choices.length > 0).map((e) => e.choices[0]);
        expect(deltas.map((c) => c.delta.content ?? '').join('')).toBe(tokens.slice(reasoningUntil).join(''));
        expect(deltas.map((c) => c.delta.reasoning_content ?? '').join('')).toBe(tokens.slice(0, reasoningUntil).join(''));
        const finishes = deltas.filter((c) => c.finish_reason !== null);
        expect(finishes.map((c) => c.finish_reason)).toEqual([finish]);
        expect(finishes[0].delta.tool_calls?.length ?? 0).toBe(finish === 'tool_calls' ? 1 : 0);
        expect(events.at(-1)).toMatchObject({ choices: [], usage });
        const logprobs = deltas.flatMap((c) => c.logprobs?.content ?? []);
        expect(logprobs.map((l: any) => l.token)).toEqual(withLogprobs ? tokens : []);
      }),
      { numRuns: 300 },
    );
  });

  it('keeps the text and the legacy logprobs offsets for any chunk boundaries (completions)', () => {
    fc.assert(
      fc.property(streams, fc.array(fc.nat(), { maxLength: 20 }), ({ chunks, tokens, finish }, cuts) => {
        const plain = chunks.map(({ reasoning_content: _r, ...c }, i) => ({ ...c, text: i < tokens.length ? tokens[i]! : '' }));
        const format = completionStreamFormat('m', false);
        const written = groups(plain, cuts).map((g) => format.events(mergeGenerations(g))).join('') + format.closing();
        const choices = parse(written).map((e) => e.choices[0]);
        expect(choices.map((c) => c.text).join('')).toBe(tokens.join(''));
        expect(choices.filter((c) => c.finish_reason !== null).map((c) => c.finish_reason)).toEqual([finish]);
        const offsets = choices.flatMap((c) => c.logprobs?.text_offset ?? []);
        if (offsets.length > 0) {
          // In code points (text-offsets.ts), as Python clients index the text.
          let at = 0;
          expect(offsets).toEqual(tokens.map((t) => ((at += [...t].length), at - [...t].length)));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('gives one event per chunk when nothing is merged, and a finish when the runtime sent none', () => {
    const format = chatStreamFormat('m', false);
    const events = parse([{ text: 'a' }, { text: 'b' }].map((c) => format.events(c)).join('') + format.closing());
    expect(events.map((e) => e.choices[0].delta.content ?? null)).toEqual(['a', 'b', null]);
    expect(events.at(-1)!.choices[0].finish_reason).toBe('stop');
  });
});

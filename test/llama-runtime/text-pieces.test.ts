import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseGenerateConfig } from '../../src/llama-runtime/engine/generate-config.js';
import { ReasoningSplitter } from '../../src/llama-runtime/engine/reasoning.js';
import { StopScanner } from '../../src/llama-runtime/engine/stop-scanner.js';
import { ToolCallText, parseHermes, parseJsonCalls, toolCallFormat } from '../../src/llama-runtime/engine/tool-calls.js';

/** Feeds `text` cut at `cuts` to a scanner-like `feed`, the way tokens arrive. */
function pieces(text: string, cuts: number[]): string[] {
  const at = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  const out: string[] = [];
  let start = 0;
  for (const cut of [...at, text.length]) {
    out.push(text.slice(start, cut));
    start = cut;
  }
  return out;
}

describe('the llama.cpp engine\'s text path', () => {
  it('cuts the text before the first stop string, however the text is split into tokens', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 30 }), fc.array(fc.nat(), { maxLength: 8 }), (prefix, cuts) => {
        const text = `${prefix}<|im_end|>after`;
        const scanner = new StopScanner(['<|im_end|>', '\n\n\n\n']);
        let out = '';
        for (const piece of pieces(text, cuts)) out += scanner.feed(piece);
        if (!scanner.stopped) out += scanner.flush();
        const first = Math.min(...['<|im_end|>', '\n\n\n\n'].map((s) => text.indexOf(s)).filter((i) => i >= 0));
        expect(out).toBe(text.slice(0, first));
        // Which one ended it (Anthropic's stop_sequence): the first in the text.
        expect(scanner.matched).toBe(text.indexOf('\n\n\n\n') === first ? '\n\n\n\n' : '<|im_end|>');
      }),
    );
  });

  it('names the stop string that ended the text: of two at one place, the first given', () => {
    const scanner = new StopScanner(['ab', 'abc', 'a']);
    expect(scanner.feed('x') + scanner.feed('abcd')).toBe('x');
    expect(scanner.matched).toBe('ab');
    expect(new StopScanner(['STOP']).matched).toBeNull();
  });

  it('holds back a tool call and returns it as tool_calls, in both formats', () => {
    const hermes = new ToolCallText('hermes');
    let text = '';
    for (const piece of pieces('Sure. <tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>', [3, 9, 12, 40])) text += hermes.feed(piece);
    const [rest, calls] = hermes.finish();
    expect(text + rest).toBe('Sure. ');
    expect(calls.map((c) => [c.function.name, JSON.parse(c.function.arguments)])).toEqual([['get_weather', { city: 'Paris' }]]);
    expect(parseJsonCalls('{"name": "t", "parameters": {"tz": "UTC"}}')[1][0]!.function).toEqual({ name: 't', arguments: '{"tz":"UTC"}' });
    expect(parseJsonCalls('[TOOL_CALLS] [{"name": "a"}, {"name": "b", "arguments": {}}]')[1].map((c) => c.function.name)).toEqual(['a', 'b']);
    expect(parseJsonCalls('{"no": "name"}')).toEqual(['{"no": "name"}', []]);
    // A block that is not JSON stays text.
    expect(parseHermes('<tool_call>not json</tool_call>')).toEqual(['<tool_call>not json</tool_call>', []]);
    expect(toolCallFormat(null, 'llama-3.1-instruct')).toBe('json');
    expect(toolCallFormat('qwen', 'llama-3.1-instruct')).toBe('hermes');
  });

  it('never hands out a forced call as text: cut short, it is the call so far once its name is whole', () => {
    const cut = (text: string) => {
      const forced = new ToolCallText('json', true);
      const shown = forced.feed(text);
      const [rest, calls] = forced.finish();
      return { text: shown + rest, calls: calls.map((c) => [c.function.name, c.function.arguments]), truncated: forced.truncated };
    };
    expect(cut('{"name": "get_weather",\n\t"')).toEqual({ text: '', calls: [['get_weather', '']], truncated: true });
    expect(cut('{"name": "get_weather", "arguments": {"city": "Par')).toEqual({ text: '', calls: [['get_weather', '{"city": "Par']], truncated: true });
    expect(cut('{"name": "get_wea')).toEqual({ text: '', calls: [], truncated: true });
    expect(cut('{ "name":"a\\"b", "arguments": {}')).toEqual({ text: '', calls: [['a"b', '{}']], truncated: true });
    expect(cut('   ')).toEqual({ text: '', calls: [], truncated: false });
    // A whole call is a call, as without the grammar.
    expect(cut('{"name": "t", "arguments": {"tz": "UTC"}}')).toEqual({ text: '', calls: [['t', '{"tz":"UTC"}']], truncated: false });
    // Not forced, a cut JSON stays the text it was.
    const free = new ToolCallText('json');
    expect(free.feed('{"name": "t"') + free.finish()[0]).toBe('{"name": "t"');
  });

  it('splits reasoning from the answer across token boundaries', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 10 }), (cuts) => {
        const splitter = new ReasoningSplitter('<think>', '</think>', false);
        let thought = '';
        let answer = '';
        for (const piece of pieces('<think>\nLet me see.\n</think>\n\nForty two.', cuts)) {
          const [t, a] = splitter.feed(piece);
          thought += t;
          answer += a;
        }
        const [t, a] = splitter.finish();
        expect([thought + t, answer + a]).toEqual(['Let me see.\n', 'Forty two.']);
      }),
    );
  });

  it('checks generate_config as the Transformers engine does, naming the field', () => {
    expect(parseGenerateConfig({ max_tokens: 3.0, temperature: null, stop: 'x', logprobs: true, top_logprobs: 2 })).toMatchObject({ maxTokens: 3, temperature: 1, stop: ['x'], topLogprobs: 2 });
    expect(parseGenerateConfig({ response_format: { type: 'json_schema', json_schema: { schema: { type: 'object' } } } }).guide).toEqual({ kind: 'json_schema', schema: { type: 'object' } });
    const bad: Array<[Record<string, unknown>, RegExp]> = [
      [{ max_tokens: 2.5 }, /max_tokens must be an integer/],
      [{ temperature: -1 }, /temperature must be at least 0/],
      [{ top_p: 0 }, /top_p must be in \(0, 1\]/],
      [{ frequency_penalty: 3 }, /frequency_penalty must be from -2 to 2/],
      [{ logit_bias: { abc: 1 } }, /logit_bias keys must be token ids/],
      [{ logit_bias: { '5': 101 } }, /logit_bias\[5\] must be from -100 to 100/],
      [{ top_logprobs: 21, logprobs: true }, /top_logprobs must be an integer from 0 to 20/],
      [{ min_tokens: 2 }, /min_tokens is not supported by the llama.cpp engine/],
      [{ response_format: { type: 'xml' } }, /response_format.type must be/],
      [{ ignore_eos: 'yes' }, /ignore_eos must be true or false/],
    ];
    for (const [config, message] of bad) expect(() => parseGenerateConfig(config), JSON.stringify(config)).toThrow(message);
  });
});

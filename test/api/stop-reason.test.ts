import { describe, expect, it } from 'vitest';
import { chatCompletion } from '../../src/api/chat/serving.js';
import { chatStreamFormat } from '../../src/api/chat/stream-events.js';
import { completion } from '../../src/api/completions/serving.js';
import { completionStreamFormat } from '../../src/api/completions/stream-events.js';
import type { Generation } from '../../src/api/llm/generate-config.js';

/** The JSON payloads of an SSE text. */
const payloads = (sse: string): Array<Record<string, any>> =>
  sse
    .split('\n')
    .filter((line) => line.startsWith('data: ') && line !== 'data: [DONE]')
    .map((line) => JSON.parse(line.slice(6)));

// vLLM's `stop_reason` on OpenAI choices: the stop string that ended the text, else null.
const endings: Array<[string, Generation, string | null]> = [
  ['a stop string', { text: '', finish_reason: 'stop', stop_sequence: '\n\nUser:' }, '\n\nUser:'],
  ['an end token', { text: '', finish_reason: 'stop' }, null],
  ['the length', { text: '', finish_reason: 'length' }, null],
  // A runtime that named a string with another finish is not believed.
  ['a tool call', { text: '', finish_reason: 'tool_calls', stop_sequence: 'x', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] }, null],
];

describe("stop_reason (vLLM's) on OpenAI answers", () => {
  it.each(endings)('non-stream chat and completion, ended by %s', (_, last, expected) => {
    expect((chatCompletion('m', { ...last, text: 'hi' }).choices as any[])[0].stop_reason).toBe(expected);
    expect((completion('m', { ...last, text: 'hi' }).choices as any[])[0].stop_reason).toBe(expected);
  });

  it.each(endings)('the last chunk of a chat and a completion stream, ended by %s; no token event carries it', (_, last, expected) => {
    for (const format of [chatStreamFormat('m', true), completionStreamFormat('m', true)]) {
      const sse = format.opening() + format.events({ text: 'a' }) + format.events({ text: 'b' }) + format.events(last);
      const chunks = payloads(sse).filter((p) => p.choices.length > 0);
      const finishing = chunks.filter((p) => p.choices[0].finish_reason !== null);
      expect(finishing).toHaveLength(1);
      expect(finishing[0]!.choices[0].stop_reason).toBe(expected);
      for (const p of chunks.filter((c) => c.choices[0].finish_reason === null)) expect(p.choices[0]).not.toHaveProperty('stop_reason');
    }
  });

  it('a stream cut before its end (no finishing chunk from the runtime) says null', () => {
    for (const format of [chatStreamFormat('m', false), completionStreamFormat('m', false)]) {
      const last = payloads(format.events({ text: 'a' }) + format.closing()).pop()!;
      expect(last.choices[0].stop_reason).toBeNull();
    }
  });
});

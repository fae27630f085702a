import { describe, expect, it } from 'vitest';
import { toChatRequest } from '../../src/api/anthropic/chat-request.js';
import { anthropicMessage, stopOf } from '../../src/api/anthropic/message-response.js';
import { messagesBody } from '../../src/api/anthropic/schema.js';
import { anthropicStreamFormat } from '../../src/api/anthropic/stream-events.js';

const parse = (body: unknown) => messagesBody.parse(body);

describe('Anthropic Messages as OpenAI chat', () => {
  it('maps system, text, images, tool use and tool results in order', () => {
    const chat = toChatRequest(
      parse({
        model: 'm',
        max_tokens: 20,
        system: [{ type: 'text', text: 'Be brief.' }],
        stop_sequences: ['END'],
        temperature: 0.3,
        tools: [{ name: 'weather', description: 'Weather by city', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
        tool_choice: { type: 'tool', name: 'weather' },
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Look: ' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } }] },
          { role: 'assistant', content: [{ type: 'text', text: 'Checking.' }, { type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Paris' } }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'sunny' }] }, { type: 'text', text: 'And?' }] },
        ],
      }),
    );
    expect(chat).toEqual({
      model: 'm',
      max_tokens: 20,
      stop: ['END'],
      temperature: 0.3,
      tools: [{ type: 'function', function: { name: 'weather', description: 'Weather by city', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
      tool_choice: { type: 'function', function: { name: 'weather' } },
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'Look: ' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] },
        { role: 'assistant', content: 'Checking.', tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }] },
        { role: 'tool', tool_call_id: 'toolu_1', content: 'sunny' },
        { role: 'user', content: 'And?' },
      ],
    });
  });

  it("leaves out Claude Code's billing header, puts text blocks on lines of their own, and keeps a tool result's images", () => {
    const chat = toChatRequest(
      parse({
        model: 'm',
        max_tokens: 5,
        system: [
          { type: 'text', text: 'x-anthropic-billing-header: cc_version=2.0.1; cc_entrypoint=cli' },
          { type: 'text', text: 'You are a coder.', cache_control: { type: 'ephemeral' } },
          { type: 'text', text: 'Be brief.' },
        ],
        messages: [
          { role: 'user', content: [{ type: 'text', text: '<system-reminder>ctx</system-reminder>' }, { type: 'text', text: 'Read a.png' }] },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Read', input: { path: 'a.png' } }] },
          {
            role: 'user',
            content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'the image:' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } }] }],
          },
        ],
      }),
    );
    expect(chat.messages).toEqual([
      { role: 'system', content: 'You are a coder.\nBe brief.' },
      { role: 'user', content: '<system-reminder>ctx</system-reminder>\nRead a.png' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'Read', arguments: '{"path":"a.png"}' } }] },
      { role: 'tool', tool_call_id: 'toolu_1', content: 'the image:' },
      { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] },
    ]);
  });

  it("refuses tool turns that do not pair up, by Anthropic's rule and in its words", () => {
    const use = (id: string) => ({ type: 'tool_use', id, name: 'weather', input: {} });
    const result = (id: string) => ({ type: 'tool_result', tool_use_id: id, content: 'sunny' });
    const refusal = (messages: unknown[]): { param?: string; message: string } | null => {
      try {
        toChatRequest(parse({ model: 'm', max_tokens: 1, messages }));
        return null;
      } catch (err) {
        return { param: (err as { param?: string }).param, message: (err as Error).message };
      }
    };
    const ask = { role: 'user', content: 'Weather?' };
    // Paired, several calls answered in any order, and an assistant prefill ending with a call: taken.
    expect(refusal([ask, { role: 'assistant', content: [use('a'), use('b')] }, { role: 'user', content: [result('b'), result('a'), { type: 'text', text: 'so?' }] }])).toBeNull();
    expect(refusal([ask, { role: 'assistant', content: [use('a')] }])).toBeNull();
    // A result with no call just before it.
    const stray = refusal([ask, { role: 'assistant', content: 'ok' }, { role: 'user', content: [{ type: 'text', text: 'x' }, result('zz')] }]);
    expect(stray?.param).toBe('messages.2.content.1');
    expect(stray?.message).toContain('unexpected `tool_use_id` found in `tool_result` blocks: zz');
    expect(refusal([{ role: 'user', content: [result('a')] }])?.param).toBe('messages.0.content.0');
    // A call the next message does not answer (all of them named), or answers a turn late.
    const unanswered = refusal([ask, { role: 'assistant', content: [use('a'), use('b')] }, { role: 'user', content: [result('a')] }]);
    expect(unanswered?.param).toBe('messages.2');
    expect(unanswered?.message).toContain('`tool_use` ids were found without `tool_result` blocks immediately after: b');
    expect(refusal([ask, { role: 'assistant', content: [use('a')] }, { role: 'user', content: 'later' }, { role: 'assistant', content: 'x' }, { role: 'user', content: [result('a')] }])?.param).toBe('messages.2');
  });

  it("refuses an image in an assistant turn (it was dropped without a word), and hands lora_name on", () => {
    const image = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } };
    const messages = [{ role: 'user', content: 'Hi' }, { role: 'assistant', content: [{ type: 'text', text: 'Look:' }, image] }, { role: 'user', content: 'So?' }];
    expect(() => toChatRequest(parse({ model: 'm', max_tokens: 8, messages }))).toThrow(expect.objectContaining({ param: 'messages.1.content.1', message: expect.stringContaining('image blocks are taken in user messages only') }));
    expect(toChatRequest(parse({ model: 'm', max_tokens: 8, messages: [messages[0]], lora_name: 'a' })).lora_name).toBe('a');
  });

  it('continues a prefill, but not with thinking enabled, which Anthropic refuses', () => {
    const messages = [{ role: 'user', content: 'Give me JSON.' }, { role: 'assistant', content: '{"answer":' }];
    expect(toChatRequest(parse({ model: 'm', max_tokens: 8, messages }))).toMatchObject({ continue_final_message: true, add_generation_prompt: false });
    expect(toChatRequest(parse({ model: 'm', max_tokens: 8, messages, thinking: { type: 'disabled' } }))).toMatchObject({ continue_final_message: true, enable_thinking: false });
    const thinking = { type: 'enabled', budget_tokens: 1024 };
    expect(() => toChatRequest(parse({ model: 'm', max_tokens: 2048, messages, thinking }))).toThrow(expect.objectContaining({ param: 'messages.1.content', message: expect.stringContaining('cannot be continued with `thinking` enabled') }));
    // A final turn of tool calls is no prefill: taken with thinking on.
    const called = [messages[0], { role: 'assistant', content: [{ type: 'tool_use', id: 'a', name: 'weather', input: {} }] }];
    expect(toChatRequest(parse({ model: 'm', max_tokens: 2048, messages: called, thinking })).continue_final_message).toBeUndefined();
  });

  it('spells tool_choice and stop reasons as each side does', () => {
    const choice = (c: unknown) => toChatRequest(parse({ model: 'm', max_tokens: 1, messages: [{ role: 'user', content: 'x' }], tool_choice: c })).tool_choice;
    expect([choice({ type: 'auto' }), choice({ type: 'any' }), choice({ type: 'none' })]).toEqual(['auto', 'required', 'none']);
    expect(choice({ type: 'auto', disable_parallel_tool_use: false })).toBe('auto');
    // As chat's parallel_tool_calls: false: refused by name, not dropped without a word.
    expect(() => choice({ type: 'auto', disable_parallel_tool_use: true })).toThrow(/tool_choice.disable_parallel_tool_use: is not supported/);
    // A named tool is one call: met already.
    expect(choice({ type: 'tool', name: 'weather', disable_parallel_tool_use: true })).toEqual({ type: 'function', function: { name: 'weather' } });
    const reason = (finish_reason: string | undefined) => stopOf({ text: '', finish_reason }, []).stop_reason;
    expect(['stop', 'length', 'tool_calls', undefined].map(reason)).toEqual(['end_turn', 'max_tokens', 'tool_use', 'end_turn']);
    expect(() => toChatRequest(parse({ model: 'm', max_tokens: 1, messages: [{ role: 'user', content: [{ type: 'tool_use', id: 'a', name: 'b', input: {} }] }] }))).toThrow(/assistant/);
  });

  it('answers a message with thinking, text and tool_use blocks', () => {
    const message = anthropicMessage('m', {
      text: 'Here.',
      reasoning_content: 'hmm',
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }],
      finish_reason: 'tool_calls',
      usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 },
    });
    expect(message).toMatchObject({
      type: 'message',
      role: 'assistant',
      content: [{ type: 'thinking', thinking: 'hmm' }, { type: 'text', text: 'Here.' }, { type: 'tool_use', id: 'call_1', name: 'weather', input: { city: 'Oslo' } }],
      stop_reason: 'tool_use',
      usage: { input_tokens: 5, output_tokens: 7 },
    });
  });

  it("streams Anthropic's event sequence, blocks opened and closed in order", () => {
    const format = anthropicStreamFormat('m');
    const out = format.opening() + format.events({ text: '', reasoning_content: 'think' }) + format.events({ text: 'Hi' }) + format.events({ text: '!', finish_reason: 'length', usage: { prompt_tokens: 1, completion_tokens: 3, total_tokens: 4 } }) + format.closing();
    const names = [...out.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);
    expect(names).toEqual(['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
    expect(out).toContain('"stop_reason":"max_tokens"');
    expect(format.done).toBe('');
  });

  it('says stop_sequence, and which, only for one of the request\'s own stop_sequences', () => {
    const usage = { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 };
    const ours = { text: 'a', finish_reason: 'stop', stop_sequence: 'END', usage };
    expect(anthropicMessage('m', ours, ['STOP', 'END'])).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: 'END' });
    // A model's own end string (its template's, a registration's) ends the turn.
    expect(anthropicMessage('m', { ...ours, stop_sequence: '<|im_end|>' }, ['END'])).toMatchObject({ stop_reason: 'end_turn', stop_sequence: null });
    expect(anthropicMessage('m', { text: 'a', finish_reason: 'stop', usage }, ['END'])).toMatchObject({ stop_reason: 'end_turn', stop_sequence: null });
    expect(anthropicMessage('m', { ...ours, finish_reason: 'length' }, ['END'])).toMatchObject({ stop_reason: 'max_tokens', stop_sequence: null });
    const format = anthropicStreamFormat('m', ['END']);
    const delta = [...(format.opening() + format.events({ text: 'a' }) + format.events({ ...ours, text: '' })).matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1] ?? 'null')).find((e) => e.type === 'message_delta');
    expect(delta.delta).toEqual({ stop_reason: 'stop_sequence', stop_sequence: 'END' });
  });
});

describe('Anthropic Messages fields, checked', () => {
  it('says max_tokens is missing only when it is, and how small it may be otherwise', () => {
    const messages = [{ role: 'user', content: 'x' }];
    const missing = messagesBody.safeParse({ model: 'm', messages });
    expect(missing.error?.issues[0]).toMatchObject({ path: ['max_tokens'], message: 'is required: the most tokens to generate' });
    for (const max_tokens of [0, -3]) {
      const small = messagesBody.safeParse({ model: 'm', max_tokens, messages });
      expect(small.error?.issues[0]?.path).toEqual(['max_tokens']);
      expect(small.error?.issues[0]?.message).toMatch(/Too small: expected number to be >=1/);
    }
    expect(messagesBody.safeParse({ model: 'm', max_tokens: 2.5, messages }).error?.issues[0]?.message).toMatch(/expected int/);
  });

  it('says messages is missing when it is, and holds a thinking budget to at least 1024 tokens', () => {
    expect(messagesBody.safeParse({ model: 'm', max_tokens: 5 }).error?.issues[0]).toMatchObject({ path: ['messages'], message: 'is required' });
    const messages = [{ role: 'user', content: 'x' }];
    const small = messagesBody.safeParse({ model: 'm', max_tokens: 4000, messages, thinking: { type: 'enabled', budget_tokens: 100 } });
    expect(small.success).toBe(false);
    expect(JSON.stringify(small.error?.issues)).toContain('must be at least 1024');
    expect(messagesBody.safeParse({ model: 'm', max_tokens: 4000, messages, thinking: { type: 'enabled', budget_tokens: 1024 } }).success).toBe(true);
  });
});

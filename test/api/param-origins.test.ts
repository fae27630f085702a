import { describe, expect, it } from 'vitest';
import { toChatRequest } from '../../src/api/anthropic/chat-request.js';
import { messagesBody } from '../../src/api/anthropic/schema.js';
import { type ChatOrigins, originalParam, withOriginalNames } from '../../src/api/llm/param-origins.js';
import { chatMessages, normalizeInput } from '../../src/api/responses/input-items.js';
import { HangarError } from '../../src/errors/hangar-error.js';

const PNG = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } };

describe('an error about the chat request names the field the client sent', () => {
  it('Anthropic: system shifts chat\'s indexes by one; an image is its block\'s source, in a tool result too', () => {
    const origins: ChatOrigins = [];
    toChatRequest(
      messagesBody.parse({
        model: 'm',
        max_tokens: 5,
        system: 'Be brief.',
        messages: [
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'shot', input: {} }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'here' }, PNG] }, { type: 'text', text: 'What is it?' }, PNG] },
        ],
      }),
      origins,
    );
    const names = { origins, image: 'source' };
    // chat: 0 system, 1 user, 2 assistant, 3 tool, 4 user [image from the tool result, text, image]
    expect(originalParam('messages.0.content', names)).toBe('system.content');
    expect(originalParam('messages.1', names)).toBe('messages.0');
    expect(originalParam('messages.3', names)).toBe('messages.2.content.0');
    expect(originalParam('messages.4.content.0.image_url.url', names)).toBe('messages.2.content.0.content.1.source');
    expect(originalParam('messages.4.content.2.image_url.url', names)).toBe('messages.2.content.2.source');
    expect(originalParam('max_tokens', names)).toBe('max_tokens');
  });

  it('Responses: the input item and part, not chat\'s message after instructions', () => {
    const origins: ChatOrigins = [];
    const items = normalizeInput(
      [
        { role: 'user', content: 'Hi' },
        { role: 'user', content: [{ type: 'input_text', text: 'And' }, { type: 'input_image', image_url: 'data:image/png;base64,AAAA' }] },
      ],
      () => null,
    );
    chatMessages('Be brief.', items, origins);
    const names = { origins, image: 'image_url', fallback: 'input' };
    expect(originalParam('messages.2.content.1.image_url.url', names)).toBe('input.1.content.1.image_url');
    expect(originalParam('messages.0', names)).toBe('instructions');
    expect(originalParam('messages.9', names)).toBe('input');
    expect(originalParam('messages.2.content.1.image_url.detail', names)).toBe('input.1.content.1.detail');
  });

  it('renames the param and the runtime\'s bracketed path in the message', async () => {
    const names = { origins: [{ path: 'system' }, { path: 'messages.0', parts: ['messages.0.content.0', 'messages.0.content.1'] }] as ChatOrigins, image: 'source' };
    const failing = Promise.reject(new HangarError('inference_invalid_input', ['messages[1].content[1]: the image is 9000x9000 pixels'], { param: 'messages.1.content.1.image_url.url' }));
    const err = (await withOriginalNames(failing, names).catch((e: unknown) => e)) as HangarError;
    expect(err.param).toBe('messages.0.content.1.source');
    expect(err.message).toBe('messages.0.content.1: the image is 9000x9000 pixels');
    // A detail's path reads the same in the param and in the message.
    const responses = { origins: [{ path: 'input.0', parts: ['input.0.content.0'] }] as ChatOrigins, image: 'image_url', fallback: 'input' };
    const detail = (await withOriginalNames(Promise.reject(new HangarError('invalid_field', ['messages.0.content.0.image_url.detail: must be auto, low or high'], { param: 'messages.0.content.0.image_url.detail' })), responses).catch((e: unknown) => e)) as HangarError;
    expect([detail.param, detail.message]).toEqual(['input.0.content.0.detail', 'input.0.content.0.detail: must be auto, low or high']);
  });
});

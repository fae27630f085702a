import { describe, expect, it } from 'vitest';
import { chatBody } from '../../src/api/chat/schema.js';

describe('chat history sent back as SDKs dump it', () => {
  it('takes null name, tool_calls and tool_call_id as none, and drops them before any template reads them', () => {
    // What openai-python's `completion.choices[0].message.model_dump()` gives.
    const dumped = { role: 'assistant', content: 'Hello', refusal: null, annotations: null, audio: null, function_call: null, tool_calls: null, name: null };
    const parsed = chatBody.parse({ model: 'm', messages: [{ role: 'user', content: 'hi', name: null }, dumped, { role: 'user', content: 'more' }] });
    expect(parsed.messages[1]).toEqual({ role: 'assistant', content: 'Hello' });
    expect(parsed.messages[0]).toEqual({ role: 'user', content: 'hi' });
  });

  it('still refuses values of the wrong type, naming the field', () => {
    const wrong = chatBody.safeParse({ model: 'm', messages: [{ role: 'assistant', content: 'x', tool_calls: 'none' }] });
    expect(wrong.success).toBe(false);
    expect(wrong.error?.issues[0]?.path).toEqual(['messages', 0, 'tool_calls']);
  });
});

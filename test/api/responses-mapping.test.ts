import { describe, expect, it } from 'vitest';
import { HangarError } from '../../src/errors/hangar-error.js';
import { toChatRequest } from '../../src/api/responses/chat-request.js';
import { responsesParam, withResponsesNames } from '../../src/api/responses/error-names.js';
import { chatMessages, normalizeInput } from '../../src/api/responses/input-items.js';
import { finalResponse, type ResponseContext } from '../../src/api/responses/response-object.js';
import { responsesBody } from '../../src/api/responses/schema.js';
import { responsesStreamFormat } from '../../src/api/responses/stream-events.js';

const body = (fields: Record<string, unknown>) => responsesBody.parse({ model: 'm', input: 'hi', ...fields });
const context = (fields: Record<string, unknown> = {}): ResponseContext => ({ id: 'resp_1', createdAt: 1, body: body(fields), store: true, logprobs: false });
const noLookup = () => null;

/** Event data of an SSE text, in order. */
function events(text: string): Array<Record<string, any>> {
  return text
    .split('\n\n')
    .filter((block) => block.length > 0)
    .map((block) => {
      const [eventLine, dataLine] = block.split('\n');
      const data = JSON.parse(dataLine!.slice('data: '.length));
      expect(eventLine).toBe(`event: ${data.type}`);
      return data;
    });
}

describe('Responses input as chat messages', () => {
  it('orders instructions, messages, function calls and their outputs as chat does', () => {
    const items = normalizeInput(
      [
        { role: 'developer', content: 'Use tools.' },
        { role: 'user', content: [{ type: 'input_text', text: 'Weather in ' }, { type: 'input_text', text: 'Paris?' }] },
        { type: 'reasoning', summary: [] },
        { role: 'assistant', content: [{ type: 'output_text', text: 'Checking.' }] },
        { type: 'function_call', call_id: 'c1', name: 'weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call', call_id: 'c2', name: 'clock', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c1', output: 'sunny' },
        { type: 'function_call_output', call_id: 'c2', output: [{ type: 'input_text', text: 'noon' }] },
        { role: 'user', content: [{ type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'low' }, { type: 'input_text', text: 'And this?' }] },
      ],
      noLookup,
    );
    expect(items.every((i) => typeof i.id === 'string' && i.id.length > 0)).toBe(true);
    expect(chatMessages('Be brief.', items)).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'system', content: 'Use tools.' },
      { role: 'user', content: 'Weather in Paris?' },
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
          { id: 'c2', type: 'function', function: { name: 'clock', arguments: '{}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
      { role: 'tool', tool_call_id: 'c2', content: 'noon' },
      { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'low' } }, { type: 'text', text: 'And this?' }] },
    ]);
  });

  it('resolves item references through the lookup, and refuses unknown ones by path', () => {
    const stored = { id: 'msg_1', type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'earlier' }] };
    const items = normalizeInput([{ type: 'item_reference', id: 'msg_1' }], (id) => (id === 'msg_1' ? stored : null));
    expect(items).toEqual([stored]);
    const refused = (() => {
      try {
        normalizeInput([{ role: 'user', content: 'x' }, { type: 'item_reference', id: 'msg_2' }], noLookup);
      } catch (err) {
        return err as HangarError;
      }
    })();
    expect(refused).toMatchObject({ code: 'response_item_not_found', param: 'input.1.id' });
  });

  it('maps the request fields onto chat, tool_choice and text.format in chat spelling', () => {
    const tool = { type: 'function', name: 'weather', parameters: { type: 'object' }, strict: true };
    const chat = toChatRequest(
      body({ max_output_tokens: 9, temperature: 0.2, top_p: 0.5, tools: [tool], tool_choice: { type: 'function', name: 'weather' }, text: { format: { type: 'json_schema', name: 'w', schema: { type: 'object' }, strict: true } }, top_logprobs: 2 }),
      [],
    );
    expect(chat).toMatchObject({
      max_tokens: 9,
      temperature: 0.2,
      top_p: 0.5,
      logprobs: true,
      top_logprobs: 2,
      tools: [{ type: 'function', function: { name: 'weather', parameters: { type: 'object' }, strict: true } }],
      tool_choice: { type: 'function', function: { name: 'weather' } },
      response_format: { type: 'json_schema', json_schema: { name: 'w', schema: { type: 'object' }, strict: true } },
    });
  });
});

describe('Responses answers', () => {
  it('builds reasoning, message and function_call items, incomplete at max_output_tokens', () => {
    const response = finalResponse(context(), {
      text: 'Sure.',
      reasoning_content: 'Think.',
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Rome"}' } }],
      finish_reason: 'length',
      usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
    });
    expect(response.status).toBe('incomplete');
    expect(response.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect((response.output as Array<{ type: string }>).map((i) => i.type)).toEqual(['reasoning', 'message', 'function_call']);
    expect(response.output_text).toBe('Sure.');
    expect((response.output as Array<Record<string, unknown>>)[2]).toMatchObject({ call_id: 'call_1', name: 'weather', arguments: '{"city":"Rome"}' });
    expect(response.usage).toMatchObject({ input_tokens: 3, output_tokens: 4, total_tokens: 7 });
  });

  it('streams reasoning then text as two items, then a call, with sequence numbers and the stored response at the end', () => {
    let stored: Record<string, unknown> | null = null;
    const format = responsesStreamFormat(context(), (r) => (stored = r));
    let text = format.opening();
    text += format.events({ text: '', reasoning_content: 'Hmm' });
    text += format.events({ text: 'Hel' });
    text += format.events({ text: 'lo', finish_reason: 'tool_calls', tool_calls: [{ id: 'call_9', function: { name: 'f', arguments: '{}' } }], usage: { prompt_tokens: 1, completion_tokens: 3, total_tokens: 4 } });
    text += format.closing();
    const all = events(text);
    expect(all.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.reasoning_text.delta',
      'response.reasoning_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(all.map((e) => e.sequence_number)).toEqual(all.map((_, i) => i));
    expect(all.filter((e) => e.type === 'response.output_item.added').map((e) => e.output_index)).toEqual([0, 1, 2]);
    expect(all.find((e) => e.type === 'response.output_text.done')).toMatchObject({ text: 'Hello', output_index: 1, content_index: 0 });
    const completed = all.at(-1)!.response;
    expect(completed.output_text).toBe('Hello');
    expect(completed.output.map((i: { type: string }) => i.type)).toEqual(['reasoning', 'message', 'function_call']);
    expect(stored).toEqual(completed);
  });

  it('ends a stream without a finish reason as completed, and a failure as response.failed that stores nothing', () => {
    let stored = 0;
    const ended = responsesStreamFormat(context(), () => stored++);
    const quiet = events(ended.opening() + ended.closing());
    // An empty answer is still one (empty) message, as OpenAI answers one.
    expect(quiet.map((e) => e.type).slice(-4)).toEqual(['response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed']);
    expect(quiet.at(-1)!.response.output).toEqual([expect.objectContaining({ type: 'message', content: [expect.objectContaining({ text: '' })] })]);
    expect(stored).toBe(1);
    const failing = responsesStreamFormat(context(), () => stored++);
    const failed = events(failing.opening() + failing.events({ text: 'par' }) + failing.failure!(new HangarError('request_aborted', ['r1'])));
    expect(failed.at(-1)).toMatchObject({ type: 'response.failed', response: { status: 'failed', error: { code: 'request_aborted' } } });
    expect(failed.at(-1)!.response.output[0]).toMatchObject({ type: 'message', status: 'incomplete', content: [{ text: 'par' }] });
    expect(stored).toBe(1);
  });
});

describe("an engine's error about a chat field, named as the Responses request spells it", () => {
  const failing = (err: HangarError): Promise<never> => Promise.reject(err);

  it('names text.format, text.format.schema, max_output_tokens and input', async () => {
    const schema = new HangarError('inference_invalid_input', ['response_format.json_schema.schema: response_format.json_schema.schema.type must be one of string, ...'], { param: 'response_format' });
    await expect(withResponsesNames(failing(schema))).rejects.toMatchObject({ param: 'text.format', message: 'text.format.schema: text.format.schema.type must be one of string, ...' });
    const length = new HangarError('inference_invalid_input', ['max_tokens must be at most 100'], { param: 'max_tokens' });
    await expect(withResponsesNames(failing(length))).rejects.toMatchObject({ param: 'max_output_tokens', message: 'max_output_tokens must be at most 100' });
    const part = new HangarError('inference_invalid_input', ['messages.1.content: bad part'], { param: 'messages.1.content' });
    await expect(withResponsesNames(failing(part))).rejects.toMatchObject({ param: 'input', message: 'input.content: bad part' });
  });

  it('leaves alone a field both requests name alike, and an answer', async () => {
    const top = new HangarError('invalid_field', ['top_logprobs: too many'], { param: 'top_logprobs' });
    await expect(withResponsesNames(failing(top))).rejects.toBe(top);
    await expect(withResponsesNames(Promise.resolve(7))).resolves.toBe(7);
    expect(responsesParam('tool_choice')).toBe('tool_choice');
  });

  it("names a tool's fields without chat's function wrapper", async () => {
    expect(responsesParam('tools.0.function.name')).toBe('tools.0.name');
    expect(responsesParam('tools.12.function')).toBe('tools.12');
    const schema = new HangarError('inference_invalid_input', ['tools[1].function.parameters: pattern (at tools[1].function.parameters.properties.a) cannot be enforced'], { param: 'tools.1' });
    await expect(withResponsesNames(failing(schema))).rejects.toMatchObject({ param: 'tools.1', message: 'tools.1.parameters: pattern (at tools.1.parameters.properties.a) cannot be enforced' });
  });
});

import { describe, expect, it } from 'vitest';
import type { AuthConfig } from '../../src/auth/auth-config.js';
import { upstreamAuthConfig } from '../fixtures/auth-users.js';
import { buildTestApp } from './test-app.js';
import { messagesBody } from '../../src/api/anthropic/schema.js';
import { chatBody } from '../../src/api/chat/schema.js';
import { tokenizeBody } from '../../src/api/tokenizer/schema.js';
import { namingField, specificIssue } from '../../src/api/validation-issue.js';

/** The field and words a client gets for a body the schema refuses. */
function refusal(schema: { safeParse(v: unknown): { success: boolean; error?: { issues: unknown[] } } }, body: unknown): [string, string] {
  const parsed = schema.safeParse(body);
  expect(parsed.success).toBe(false);
  const issue = specificIssue(parsed.error!.issues[0] as never);
  return [issue.path.join('.'), issue.message];
}

const anthropic = (content: unknown, extra: Record<string, unknown> = {}) => refusal(messagesBody, { model: 'm', max_tokens: 5, messages: [{ role: 'user', content }], ...extra });

describe('a refusal names the field a client can fix, through unions', () => {
  it("says what a record's key must be, not zod's \"Invalid key in record\"", () => {
    expect(refusal(chatBody, { model: 'm', messages: [{ role: 'user', content: 'hi' }], logit_bias: { '-5': 1 } })).toEqual(['logit_bias.-5', 'keys must be token ids']);
    // Twenty digits are no token id either (it reached the engine, which named it otherwise).
    expect(refusal(chatBody, { model: 'm', messages: [{ role: 'user', content: 'hi' }], logit_bias: { '99999999999999999999': 1 } })).toEqual(['logit_bias.99999999999999999999', 'keys must be token ids']);
  });

  it('keeps a union\'s own words for a value of no kind it knows', () => {
    expect(anthropic([{ type: 'document', source: {} }])).toEqual(['messages.0.content.0', 'content blocks must be text, image, tool_use, tool_result or thinking']);
  });

  it('names what the kind the value is of lacks, however deep', () => {
    expect(anthropic([{ type: 'image', source: { type: 'base64' } }])).toEqual(['messages.0.content.0.source.media_type', 'Invalid input: expected string, received undefined']);
    expect(anthropic([{ type: 'tool_result' }])).toEqual(['messages.0.content.0.tool_use_id', 'Invalid input: expected string, received undefined']);
    expect(anthropic('x', { tool_choice: { type: 'tool' } })).toEqual(['tool_choice.name', 'Invalid input: expected string, received undefined']);
  });

  it('lists every kind when a value is of none, and every type when its type fits no shape', () => {
    expect(anthropic([{ type: 'image', source: { type: 'file', file_id: 'f' } }])).toEqual(['messages.0.content.0.source.type', 'Invalid input: expected "base64" or "url"']);
    expect(anthropic(5)).toEqual(['messages.0.content', 'Invalid input: expected string or array, received number']);
    expect(refusal(chatBody, { model: 'm', messages: [{ role: 'user', content: 'x' }], stop: 5 })).toEqual(['stop', 'Invalid input: expected string or array, received number']);
  });

  it('faults the field a body sent over the one another shape would need', () => {
    // vLLM's /tokenize takes a prompt or messages: bad messages are about messages.
    expect(refusal(tokenizeBody, { messages: 'hi' })).toEqual(['messages', 'Invalid input: expected array, received string']);
    expect(refusal(tokenizeBody, { messages: [], tools: 'bad' })).toEqual(['tools', 'Invalid input: expected array, received string']);
    // Text is read as JSON (Xinference's form); text that is not an object is refused as one.
    expect(refusal(tokenizeBody, { messages: [], chat_template_kwargs: 'x' })).toEqual(['chat_template_kwargs', 'expected an object of template variables, or its JSON text']);
    expect(refusal(tokenizeBody, { prompt: 5 })).toEqual(['prompt', 'Invalid input: expected string, received number']);
    expect(refusal(tokenizeBody, {})[0]).toBe('prompt'); // neither: the first shape's field
  });

  it('names a chat content part of no known type, and a text part without its text', () => {
    const chat = (part: unknown) => refusal(chatBody, { model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }, part] }] });
    expect(chat({ type: 'bogus' })).toEqual(['messages.0.content.1.type', expect.stringContaining("'text' | 'image_url'")]);
    expect(chat({ type: 'text' })).toEqual(['messages.0.content.1.text', 'Invalid input: expected string, received undefined']);
    expect(chat({ type: 'text', text: 5 })).toEqual(['messages.0.content.1.text', 'Invalid input: expected string, received number']);
    expect(chatBody.safeParse({ model: 'm', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:,' } }, { type: 'input_audio', input_audio: {} }] }] }).success).toBe(true);
  });

  it('names what is wrong in the shape whose type the value has', () => {
    const stop = Array.from({ length: 17 }, (_, i) => `s${i}`);
    expect(refusal(chatBody, { model: 'm', messages: [{ role: 'user', content: 'x' }], stop })).toEqual(['stop', 'Too big: expected array to have <=16 items']);
    expect(refusal(chatBody, { model: 'm', messages: [{ role: 'user', content: 'x' }], stop: ['a', 5] })).toEqual(['stop.1', 'Invalid input: expected string, received number']);
  });

  it('leaves an issue that is not a union as it is', () => {
    expect(anthropic('x', { temperature: 3 })).toEqual(['temperature', 'Too big: expected number to be <=1']);
  });
});

describe('a refusal through the HTTP error handler', () => {
  it('names a strict body\'s unknown field itself, and a union\'s deepest field, in the contract\'s shape', async () => {
    const { app, close } = await buildTestApp(upstreamAuthConfig() as AuthConfig);
    try {
      const headers = { authorization: 'Bearer sk-3sjLbdwqAhhAF' };
      const unknown = await app.inject({ method: 'POST', url: '/v1/admin/users', headers, payload: { username: 'ann', password: 'long enough pw', colour: 'red' } });
      expect([unknown.statusCode, unknown.json().error.param, unknown.json().error.code]).toEqual([400, 'colour', 'invalid_field']);
      const block = await app.inject({ method: 'POST', url: '/v1/messages', headers, payload: { model: 'm', max_tokens: 5, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64' } }] }] } });
      expect(block.json().error).toMatchObject({ param: 'messages.0.content.0.source.media_type', code: 'invalid_field' });
      expect(block.json().detail).toBe('messages.0.content.0.source.media_type: Invalid input: expected string, received undefined');
    } finally {
      await close();
    }
  });
});

describe('namingField', () => {
  it('names a field whose name is a piece of the message\'s words, and not one the message already names', () => {
    // `n` is in "number", `input` in "Invalid input", `id` in "Invalid": the field was left out.
    expect(namingField('n', 'Too small: expected number to be >=1')).toBe('n: Too small: expected number to be >=1');
    expect(namingField('input', 'Invalid input: expected string or array, received number')).toBe('input: Invalid input: expected string or array, received number');
    expect(namingField('id', 'Invalid input: expected number, received NaN')).toBe('id: Invalid input: expected number, received NaN');
    expect(namingField('model_name', 'Invalid input. Please specify the `model_name` field.')).toBe('Invalid input. Please specify the `model_name` field.');
    expect(namingField('stop', 'stop: empty strings stop nothing')).toBe('stop: empty strings stop nothing');
    expect(namingField('stop', 'stopped')).toBe('stop: stopped');
    expect(namingField('', 'invalid value')).toBe('invalid value');
  });

  it('names `n` in a chat request\'s refusal', async () => {
    const { app, close } = await buildTestApp(null);
    try {
      const res = await app.inject({ method: 'POST', url: '/v1/chat/completions', payload: { model: 'm', messages: [{ role: 'user', content: 'hi' }], n: 0 } });
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatchObject({ param: 'n', code: 'invalid_field', message: expect.stringMatching(/^n: /) });
    } finally {
      await close();
    }
  });
});

describe('a union of plain values', () => {
  it('says its own words, not its first shape\'s', async () => {
    const { app, close } = await buildTestApp(null);
    try {
      for (const n_gpu of [1.5, {}, 'all']) {
        const res = await app.inject({ method: 'POST', url: '/v1/models', payload: { model_name: 'simulator', model_engine: 'simulator', n_gpu } });
        expect(res.json().error, JSON.stringify(n_gpu)).toMatchObject({ param: 'n_gpu', message: 'n_gpu: must be "auto", an integer, or null' });
      }
    } finally {
      await close();
    }
  });
});

describe('launch envs', () => {
  it('refuses what no process environment can hold, naming the variable', async () => {
    const { app, close } = await buildTestApp(null);
    try {
      const launch = (envs: Record<string, string>) => app.inject({ method: 'POST', url: '/v1/models', payload: { model_name: 'simulator', model_engine: 'simulator', envs } });
      for (const [envs, param, words] of [
        [{ A: 'a\u0000b' }, 'envs.A', 'NUL'],
        [{ '': 'x' }, 'envs.', 'non-empty'],
        [{ 'B=C': 'y' }, 'envs.B=C', '`=`'],
      ] as const) {
        const res = await launch(envs);
        expect(res.statusCode, res.body).toBe(400);
        expect(res.json().error).toMatchObject({ code: 'invalid_field', param, message: expect.stringContaining(words) });
      }
    } finally {
      await close();
    }
  });
});

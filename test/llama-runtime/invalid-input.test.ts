import { describe, expect, it } from 'vitest';
import { InvalidInput, fieldOf } from '../../src/llama-runtime/invalid-input.js';

/** The `param` of the llama.cpp runtime's invalid calls (docs/runtime-protocol.md, "Calls"). */
describe('fieldOf', () => {
  it('takes the field a message starts with, as the HTTP request spells it', () => {
    expect(fieldOf(new InvalidInput('top_p must be in (0, 1], got 3'))).toBe('top_p');
    expect(fieldOf(new InvalidInput('logit_bias: token ids [99999] are outside this model\'s vocabulary'))).toBe('logit_bias');
    expect(fieldOf(new InvalidInput('messages[2]: this model takes text only, not image_url parts'))).toBe('messages.2');
    expect(fieldOf(new InvalidInput('response_format.json_schema.schema: the schema at x must be a map'))).toBe('response_format');
    expect(fieldOf(new InvalidInput('input 3 has 900 tokens, more than the model\'s 512'))).toBe('input');
    expect(fieldOf(new TypeError('max_tokens must be an integer, got "x"'))).toBe('max_tokens');
  });

  it('prefers an explicit param, and names none when the message names no request field', () => {
    expect(fieldOf(new InvalidInput('must be an integer from 1 to 64', 'dimensions'))).toBe('dimensions');
    expect(fieldOf(new InvalidInput('The prompt is 600 tokens, which leaves no room'))).toBeNull();
    expect(fieldOf(new InvalidInput('echoes: not a field'))).toBeNull();
    expect(fieldOf('not an error')).toBeNull();
  });
});

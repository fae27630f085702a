import { getLlama } from 'node-llama-cpp';
import { describe, expect, it } from 'vitest';
import { StructuredOutput } from '../../src/llama-runtime/engine/structured-output.js';

describe('grammars for response_format, through llama.cpp itself', () => {
  it('makes a grammar of a schema in its sizes, and says what to change where llama.cpp refuses a repetition', async () => {
    const grammars = new StructuredOutput(await getLlama({ gpu: false }));
    const made = await grammars.forGuide({ kind: 'json_schema', schema: { type: 'object', properties: { a: { enum: Array.from({ length: 1000 }, (_, i) => `v${i}`) } }, required: ['a'] } });
    expect(made.grammar).toContain('"\\"v999\\""');
    // llama.cpp's parser writes its reason only to its log; the refusal names the fields to lower.
    await expect(grammars.forGuide({ kind: 'json_schema', schema: { type: 'string', maxLength: 1000 } })).rejects.toThrow(
      /^response_format\.json_schema\.schema: this JSON schema cannot be turned into a llama\.cpp grammar: .*what it refuses most is a repetition of more than about 2,000 items .*lower minLength, maxLength, minItems or maxItems\), then definitions that refer to each other with no way out/,
    );
    // Past OpenAI's sizes: refused before llama.cpp is asked.
    await expect(async () => grammars.forGuide({ kind: 'json_schema', schema: { enum: Array.from({ length: 1001 }, (_, i) => i) } })).rejects.toThrow(/more than 1000 enum values/);
  });

  it("forces a call of tools whose parameters have their own definitions (Pydantic's nested models and enums), each tool's kept apart", async () => {
    const grammars = new StructuredOutput(await getLlama({ gpu: false }));
    const paint = { type: 'function', function: { name: 'paint', parameters: { $defs: { Color: { type: 'string', enum: ['red', 'blue'] } }, type: 'object', properties: { color: { $ref: '#/$defs/Color' } }, required: ['color'] } } };
    // The same definition name in another tool, meaning something else.
    const size = { type: 'function', function: { name: 'size', parameters: { definitions: { Color: { type: 'integer' } }, type: 'object', properties: { n: { $ref: '#/definitions/Color' } }, required: ['n'] } } };
    const one = (await grammars.forToolChoice([paint], 'required'))!.grammar;
    expect(one).toContain('"\\"red\\""');
    const both = (await grammars.forToolChoice([paint, size], 'required'))!.grammar;
    expect(both).toContain('"\\"blue\\""');
    expect(both).toContain('integer-number-rule');
    const named = (await grammars.forToolChoice([paint, size], { type: 'function', function: { name: 'size' } }))!.grammar;
    expect(named).not.toContain('red');
    // A refusal names the tool's own schema and place, not the wrapper's.
    const patterned = { type: 'function', function: { name: 'p', parameters: { type: 'object', properties: { a: { type: 'string', pattern: 'x' } } } } };
    expect(() => grammars.forToolChoice([paint, patterned], 'required')).toThrow(/^tools\[1\]\.function\.parameters: pattern \(at tools\[1\]\.function\.parameters\.properties\.a\)/);
  });
});

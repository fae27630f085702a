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
});

import { getLlama } from 'node-llama-cpp';
import { describe, expect, it } from 'vitest';
import { finiteNumbers, numberRulesIn } from '../../src/llama-runtime/engine/finite-numbers.js';

describe('JSON grammars whose numbers a JSON parser reads as finite', () => {
  it("rewrites every number rule of the pinned node-llama-cpp's grammars, and llama.cpp parses the result", async () => {
    const llama = await getLlama({ gpu: false });
    const json = (await llama.getGrammarFor('json')).grammar;
    const schema = (await llama.createGrammarForJsonSchema({ type: 'object', properties: { n: { type: 'number' }, i: { type: 'integer' } } } as never)).grammar;
    // An upgrade that writes these rules otherwise fails here, not silently in answers.
    expect(numberRulesIn(json)).toBe(1);
    expect(numberRulesIn(schema)).toBe(2);

    const finiteJson = finiteNumbers(json);
    expect(finiteJson).toMatch(/^number ::= .*\(\[eE\] \[-\+\]\? \[0-9\] \[0-9\]\?\)\? ws$/m);
    const finiteSchema = finiteNumbers(schema);
    expect(finiteSchema).toMatch(/^integer-number-rule ::= "-"\? \("0" \| \[1-9\] \[0-9\]\{0,14\}\)$/m);
    expect(finiteSchema).toMatch(/^fractional-number-rule ::= .*\(\[eE\] \[-\+\]\? \("0" \| \[1-9\] \[0-9\]\?\)\)\?$/m);
    expect(numberRulesIn(finiteJson) + numberRulesIn(finiteSchema)).toBe(0);
    for (const grammar of [finiteJson, finiteSchema]) await expect(llama.createGrammar({ grammar })).resolves.toBeTruthy();
    // A grammar without number rules is left as it is.
    expect(finiteNumbers('root ::= "yes" | "no"')).toBe('root ::= "yes" | "no"');
  });
});

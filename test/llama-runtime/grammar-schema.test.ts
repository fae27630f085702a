import { describe, expect, it } from 'vitest';
import { checkGrammarSize } from '../../src/llama-runtime/engine/gbnf-size.js';
import { SCHEMA_LIMITS, grammarSchema } from '../../src/llama-runtime/engine/grammar-schema.js';

describe('JSON schemas for llama.cpp grammars', () => {
  it("rewrites pydantic's shapes to what node-llama-cpp reads, keeping their meaning", () => {
    const pydantic = {
      $defs: { Pet: { title: 'Pet', type: 'object', properties: { kind: { enum: ['cat', 'dog'], title: 'Kind' } }, required: ['kind'] } },
      properties: {
        pet: { $ref: '#/$defs/Pet' },
        nickname: { anyOf: [{ type: 'string' }, { type: 'null' }], default: null, title: 'Nickname' },
        owner: { allOf: [{ $ref: '#/definitions/Owner' }], description: 'who' },
      },
      definitions: { Owner: { type: 'object', properties: { since: { type: 'string', format: 'date' } } } },
      required: ['pet'],
      title: 'Model',
      type: 'object',
    };
    expect(grammarSchema(pydantic, 'schema')).toEqual({
      $defs: {
        Pet: { type: 'object', properties: { kind: { enum: ['cat', 'dog'] } }, required: ['kind'] },
        Owner: { type: 'object', properties: { since: { type: 'string', format: 'date' } } },
      },
      properties: {
        pet: { $ref: '#/$defs/Pet' },
        nickname: { oneOf: [{ type: 'string' }, { type: 'null' }] },
        owner: { $ref: '#/$defs/Owner' },
      },
      required: ['pet'],
      type: 'object',
    });
  });

  it('refuses by name what a grammar cannot hold a value to, with where it is', () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ type: 'integer', minimum: 1 }, /minimum \(at f\) cannot be enforced/],
      [{ type: 'object', properties: { n: { type: 'number', multipleOf: 2 } } }, /multipleOf \(at f\.properties\.n\)/],
      [{ type: 'string', pattern: '^a+$' }, /pattern/],
      [{ type: 'string', format: 'email' }, /format "email"/],
      [{ not: { type: 'null' } }, /not \(at f\)/],
      [{ allOf: [{ type: 'object' }, { required: ['a'] }] }, /allOf with 2 schemas/],
      [{ $ref: 'https://example.com/schema.json' }, /must point into the schema's own \$defs/],
      [{ type: 'array', items: false }, /false \(nothing matches it\)/],
      ['nope', /must be a map/],
      // Malformed, not just beyond a grammar: a grammar made from them would hold the answer to something else.
      [{ type: 'nope' }, /f\.type must be one of string, number, integer, boolean, null, object, array/],
      [{ type: ['string', 'date'] }, /f\.type must be one of/],
      [{ type: [] }, /f\.type must be one of/],
      [{ type: 'object', properties: { a: { type: 3 } } }, /f\.properties\.a\.type must be one of/],
      [{ enum: [] }, /f\.enum must be a non-empty list/],
      [{ type: 'object', required: 'a' }, /f\.required must be a list of property names/],
      [{ type: 'object', properties: { a: { type: 'string' } }, required: ['a', 'b'] }, /f\.required names "b", not among f\.properties/],
      [{ type: 'string', maxLength: -1 }, /f\.maxLength must be a whole number/],
      [{ type: 'array', minItems: 1.5 }, /f\.minItems must be a whole number/],
    ];
    for (const [schema, message] of cases) expect(() => grammarSchema(schema, 'f'), JSON.stringify(schema)).toThrow(message);
  });

  it("takes an integer's bounds that admit every integer the grammar writes (zod's .int()), and refuses narrower ones", () => {
    const safe = { type: 'integer', minimum: -9007199254740991, maximum: 9007199254740991 };
    expect(grammarSchema({ type: 'object', properties: { age: safe, n: { ...safe, type: ['integer', 'null'] } } }, 'f')).toEqual({
      type: 'object',
      properties: { age: { type: 'integer' }, n: { type: ['integer', 'null'] } },
    });
    expect(grammarSchema({ type: 'integer', exclusiveMinimum: -1e15, exclusiveMaximum: 1e15 }, 'f')).toEqual({ type: 'integer' });
    const narrower: unknown[] = [
      { ...safe, minimum: 0 },
      { type: 'integer', maximum: 999_999_999_999_998 },
      { type: 'integer', exclusiveMaximum: 999_999_999_999_999 },
      { ...safe, type: 'number' },
      { ...safe, type: ['integer', 'string'] },
      { minimum: -9007199254740991 },
      { type: 'integer', minimum: '-9007199254740991' },
    ];
    for (const schema of narrower) expect(() => grammarSchema(schema, 'f'), JSON.stringify(schema)).toThrow(/[mM](in|ax)imum \(at f\) cannot be enforced by a llama\.cpp grammar\. It holds integers to at most 15 digits/);
  });

  it('takes a list of types, as JSON Schema allows', () => {
    expect(grammarSchema({ type: ['string', 'null'], maxLength: 3 }, 'f')).toEqual({ type: ['string', 'null'], maxLength: 3 });
  });

  it("holds a schema to OpenAI's structured-output sizes, counted across the whole schema, where llama.cpp's grammar would take minutes", () => {
    expect(SCHEMA_LIMITS).toEqual({ alternatives: 1000, properties: 5000, characters: 120_000 });
    const values = (n: number, prefix = 'v') => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
    // At the limits: kept as they are.
    const atLimit = { type: 'object', properties: { a: { enum: values(600) }, b: { anyOf: values(400).map((c) => ({ const: c })) } } };
    expect(grammarSchema(atLimit, 'f')).toMatchObject({ properties: { a: { enum: values(600) } } });
    expect(() => grammarSchema({ type: 'object', properties: Object.fromEntries(values(5000, 'p').map((p) => [p, { type: 'integer' }])) }, 'f')).not.toThrow();
    // One past: refused by name, whether the alternatives sit in one enum or are spread over several places.
    const refusals: Array<[unknown, RegExp]> = [
      [{ enum: values(20_000) }, /^f: the schema has more than 1000 enum values and oneOf\/anyOf branches, the most a llama.cpp grammar takes here/],
      [{ type: 'object', properties: { a: { enum: values(600) }, b: { items: { enum: values(401) } } } }, /more than 1000 enum values/],
      [{ oneOf: [{ enum: values(999) }, { const: 'x' }] }, /more than 1000 enum values/],
      [{ type: 'object', properties: Object.fromEntries(values(5001, 'p').map((p) => [p, { type: 'integer' }])) }, /more than 5000 object properties/],
      [{ $defs: { a: { const: 'x'.repeat(60_000) }, b: { enum: ['y'.repeat(60_001)] } }, $ref: '#/$defs/a' }, /more than 120000 characters of property names, definition names, enum and const values/],
    ];
    for (const [schema, says] of refusals) expect(() => grammarSchema(schema, 'f'), String(says)).toThrow(says);
  });

  it('refuses what the grammar would not hold: control characters it writes raw, bounds no value meets, a $ref to nothing', () => {
    const refusals: Array<[unknown, RegExp]> = [
      [{ enum: ['a\u0001b'] }, /^f: f.enum holds the control character U\+0001, which a llama.cpp grammar would write unescaped/],
      [{ type: 'object', properties: { k: { const: { x: '\u001f' } } } }, /f.properties.k.const holds the control character U\+001F/],
      [{ type: 'object', properties: { 'a\u001fb': { type: 'string' } } }, /f.properties holds the control character U\+001F/],
      [{ type: 'string', minLength: 5, maxLength: 2 }, /^f: f.minLength \(5\) is above f.maxLength \(2\), so no answer can follow the schema$/],
      [{ type: 'array', items: { type: 'string' }, minItems: 3, maxItems: 1 }, /minItems \(3\) is above f.maxItems \(1\)/],
      [{ $ref: '#/$defs/Nope' }, /^f: \$ref "#\/\$defs\/Nope" names no definition in the schema's \$defs$/],
      [{ $defs: { A: { type: 'string' } }, type: 'object', properties: { a: { $ref: '#/definitions/B' } } }, /names no definition/],
    ];
    for (const [schema, says] of refusals) expect(() => grammarSchema(schema, 'f'), String(says)).toThrow(says);
    // Tab and newline the grammar escapes; a $ref to a definition that is there is fine.
    expect(() => grammarSchema({ enum: ['a\tb', 'c\nd'] }, 'f')).not.toThrow();
    expect(() => grammarSchema({ definitions: { A: { type: 'string' } }, $ref: '#/definitions/A' }, 'f')).not.toThrow();
    // A const's value is data: a "$ref" key in it refers to nothing.
    expect(() => grammarSchema({ const: { $ref: 'x' } }, 'f')).not.toThrow();
  });

  it('holds a GBNF grammar to the same sizes: alternatives outside strings, classes and comments, and characters', () => {
    const choice = (n: number) => `root ::= ${Array.from({ length: n }, (_, i) => `"v${i}"`).join(' | ')}`;
    expect(() => checkGrammarSize(choice(1001))).not.toThrow(); // 1,000 alternatives
    expect(() => checkGrammarSize(choice(2001))).toThrow(/^grammar: the grammar has 2000 alternatives \(\|\), more than the 1000 a llama.cpp grammar takes here$/);
    // `|` as text is no alternative.
    expect(() => checkGrammarSize(`root ::= "${'|'.repeat(2000)}" [|${'\\]|'.repeat(500)}] # ${'|'.repeat(2000)}\n`)).not.toThrow();
    expect(() => checkGrammarSize(`root ::= "${'a'.repeat(120_001)}"`)).toThrow(/more than the 120000 a llama.cpp grammar takes here/);
  });
});

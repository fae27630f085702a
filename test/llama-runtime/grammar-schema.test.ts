import { describe, expect, it } from 'vitest';
import { grammarSchema } from '../../src/llama-runtime/engine/grammar-schema.js';

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

  it('takes a list of types, as JSON Schema allows', () => {
    expect(grammarSchema({ type: ['string', 'null'], maxLength: 3 }, 'f')).toEqual({ type: ['string', 'null'], maxLength: 3 });
  });
});

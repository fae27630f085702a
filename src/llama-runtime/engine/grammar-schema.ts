import { InvalidInput } from '../invalid-input.js';

type Schema = Record<string, unknown>;

// Said of a schema, not asked of its values: left out.
const ANNOTATIONS = new Set(['title', 'description', 'default', 'examples', '$schema', '$id', '$comment', 'deprecated', 'readOnly', 'writeOnly', 'strict']);
// What node-llama-cpp turns into grammar rules (its GbnfJsonSchema).
const SUPPORTED = new Set([
  'type', 'const', 'enum', 'oneOf', 'properties', 'additionalProperties', 'minProperties', 'maxProperties', 'required',
  'items', 'prefixItems', 'minItems', 'maxItems', 'minLength', 'maxLength', 'format', '$ref', '$defs',
]);
const FORMATS = new Set(['date-time', 'time', 'date']);
const TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null', 'object', 'array']);
const COUNTS = new Set(['minProperties', 'maxProperties', 'minItems', 'maxItems', 'minLength', 'maxLength']);

/**
 * A client's JSON schema in the form node-llama-cpp makes a llama.cpp grammar from,
 * or a 400 naming what a grammar here cannot enforce, so no answer ever claims a
 * schema it was not held to. Rewritten on the way, meaning kept for generation:
 * `anyOf` becomes `oneOf` (a value made from one branch satisfies both), a one-branch
 * `allOf` its branch, `definitions` `$defs`, and annotations (`title`, `default`, ...)
 * are dropped. Every listed property is generated, so `required` always holds.
 * Refused: numeric bounds (`minimum`, `multipleOf`, ...; an integer's bounds that admit
 * every integer the grammar writes are taken, as zod's .int() sends), `pattern`, string formats
 * other than date-time, time and date, `not`, conditionals and the like.
 */
export function grammarSchema(schema: unknown, field: string): Schema {
  const out = rewrite(schema, field, field, { alternatives: 0, properties: 0, characters: 0 }) as Schema;
  // A $ref to no definition held nothing: the answer was free, the schema claimed.
  const defs = (out.$defs as Schema | undefined) ?? {};
  for (const ref of refsIn(out)) {
    const name = ref.slice('#/$defs/'.length);
    if (!Object.hasOwn(defs, name)) throw new InvalidInput(`${field}: $ref ${JSON.stringify(ref)} names no definition in the schema's $defs`);
  }
  return out;
}

function refsIn(node: unknown, found: Set<string> = new Set()): Set<string> {
  if (Array.isArray(node)) for (const item of node) refsIn(item, found);
  else if (typeof node === 'object' && node !== null) {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') found.add(value);
      // A const's or an enum's values are data, whatever keys they hold.
      else if (key !== 'const' && key !== 'enum') refsIn(value, found);
    }
  }
  return found;
}

// Control characters JSON must escape, but that llama.cpp's grammar writes raw from a
// const, an enum value or a property name: the answer was then not JSON at all. Tab and
// newline it escapes.
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f]/;

function controlIn(value: unknown): string | null {
  if (typeof value === 'string') {
    const hit = RAW_CONTROL.exec(value);
    return hit ? `U+${hit[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}` : null;
  }
  if (Array.isArray(value)) return value.map(controlIn).find((c) => c !== null) ?? null;
  if (typeof value === 'object' && value !== null) {
    for (const [key, inner] of Object.entries(value)) {
      const hit = controlIn(key) ?? controlIn(inner);
      if (hit) return hit;
    }
  }
  return null;
}

function refuseControl(value: unknown, here: string, field: string): void {
  const hit = controlIn(value);
  if (hit) throw new InvalidInput(`${field}: ${here} holds the control character ${hit}, which a llama.cpp grammar would write unescaped, so the answer would not be JSON`);
}

/** Bounds that no value meets (`minLength` 5 with `maxLength` 2): the grammar held nothing of them. */
const BOUND_PAIRS: Array<[string, string]> = [['minLength', 'maxLength'], ['minItems', 'maxItems'], ['minProperties', 'maxProperties']];

/**
 * The size a schema may have: OpenAI's own limits for structured outputs (1,000 enum
 * values, 5,000 object properties, 120,000 characters of names, enum and const values),
 * with oneOf/anyOf branches counted among the enum values, since each is an alternative
 * of the grammar too. llama.cpp's grammar takes time that grows with the square of a
 * rule's alternatives, in llama-server's own loop, where every request of the model
 * waits: 20,000 enum values took it 4.6 s of CPU and 40,000 took 14.6 s with a
 * 400-token vocabulary, so a 16 MiB body could hold the replica for hours.
 */
export const SCHEMA_LIMITS = { alternatives: 1000, properties: 5000, characters: 120_000 };

type Tally = { -readonly [K in keyof typeof SCHEMA_LIMITS]: number };

const LIMIT_WORDS: Record<keyof Tally, string> = {
  alternatives: 'enum values and oneOf/anyOf branches',
  properties: 'object properties',
  characters: 'characters of property names, definition names, enum and const values',
};

function count(tally: Tally, kind: keyof Tally, amount: number, field: string): void {
  tally[kind] += amount;
  if (tally[kind] > SCHEMA_LIMITS[kind]) {
    throw new InvalidInput(`${field}: the schema has more than ${SCHEMA_LIMITS[kind]} ${LIMIT_WORDS[kind]}, the most a llama.cpp grammar takes here (OpenAI's structured outputs have the same limit)`);
  }
}

/** The characters a value adds to the grammar's text: a string's own, anything else as JSON. */
function textLength(value: unknown): number {
  return typeof value === 'string' ? value.length : (JSON.stringify(value) ?? '').length;
}

function rewrite(node: unknown, at: string, field: string, tally: Tally): unknown {
  if (typeof node === 'boolean') {
    if (node) return {};
    throw new InvalidInput(`${field}: the schema at ${at} is false (nothing matches it), so no answer can follow it`);
  }
  if (typeof node !== 'object' || node === null || Array.isArray(node)) throw new InvalidInput(`${field}: the schema at ${at} must be a map`);
  const source = node as Schema;
  if (Array.isArray(source.allOf)) {
    if (source.allOf.length !== 1) throw new InvalidInput(`${field}: allOf with ${source.allOf.length} schemas (at ${at}) cannot be enforced by a llama.cpp grammar; merge them into one`);
    const { allOf, ...rest } = source;
    return rewrite({ ...rest, ...(allOf[0] as Schema) }, at, field, tally);
  }
  const out: Schema = {};
  for (const [key, value] of Object.entries(source)) {
    if (ANNOTATIONS.has(key)) continue;
    const here = `${at}.${key}`;
    switch (key) {
      case 'anyOf':
      case 'oneOf':
        if (!Array.isArray(value) || value.length === 0) throw new InvalidInput(`${field}: ${here} must be a non-empty list of schemas`);
        count(tally, 'alternatives', value.length, field);
        out.oneOf = value.map((branch, i) => rewrite(branch, `${here}[${i}]`, field, tally));
        break;
      case 'properties':
      case '$defs':
      case 'definitions': {
        const target = key === 'properties' ? 'properties' : '$defs';
        const names = Object.keys(object(value, here, field));
        refuseControl(names, here, field);
        if (key === 'properties') count(tally, 'properties', names.length, field);
        count(tally, 'characters', names.reduce((sum, name) => sum + name.length, 0), field);
        const entries = Object.entries(value as Schema).map(([name, sub]) => [name, rewrite(sub, `${here}.${name}`, field, tally)]);
        // A schema may carry both $defs and the older definitions: one list for the grammar.
        out[target] = { ...((out[target] as Schema | undefined) ?? {}), ...Object.fromEntries(entries) };
        break;
      }
      case 'items':
      case 'additionalProperties':
        out[key] = typeof value === 'boolean' && key === 'additionalProperties' ? value : rewrite(value, here, field, tally);
        break;
      case 'prefixItems':
        if (!Array.isArray(value)) throw new InvalidInput(`${field}: ${here} must be a list of schemas`);
        out.prefixItems = value.map((item, i) => rewrite(item, `${here}[${i}]`, field, tally));
        break;
      case '$ref':
        if (typeof value !== 'string' || !/^#\/(\$defs|definitions)\/[^/]+$/.test(value)) {
          throw new InvalidInput(`${field}: ${here} must point into the schema's own $defs ("#/$defs/<name>"), got ${JSON.stringify(value)}`);
        }
        out.$ref = value.replace('#/definitions/', '#/$defs/');
        break;
      case 'format':
        if (typeof value !== 'string' || !FORMATS.has(value)) {
          throw new InvalidInput(`${field}: format ${JSON.stringify(value)} (at ${at}) cannot be enforced by a llama.cpp grammar; it can hold date-time, time and date`);
        }
        out.format = value;
        break;
      case 'type': {
        // A type the grammar does not know is not an error to it: it would hold the answer to something else.
        const types = Array.isArray(value) ? value : [value];
        if (types.length === 0 || types.some((t) => typeof t !== 'string' || !TYPES.has(t))) {
          throw new InvalidInput(`${field}: ${here} must be one of ${[...TYPES].join(', ')}, or a non-empty list of them; got ${JSON.stringify(value)}`);
        }
        out.type = value;
        break;
      }
      case 'enum':
        if (!Array.isArray(value) || value.length === 0) throw new InvalidInput(`${field}: ${here} must be a non-empty list of values`);
        count(tally, 'alternatives', value.length, field);
        count(tally, 'characters', value.reduce((sum: number, v) => sum + textLength(v), 0), field);
        refuseControl(value, here, field);
        out.enum = value;
        break;
      case 'minimum':
      case 'maximum':
      case 'exclusiveMinimum':
      case 'exclusiveMaximum':
        // zod's .int() bounds every integer by the safe range (±9007199254740991); the
        // grammar's integers have at most 15 digits (finite-numbers.ts), all inside it.
        if (integerOnly(source.type) && typeof value === 'number' && admitsEveryInteger(key, value)) break;
        throw new InvalidInput(
          `${field}: ${key} (at ${at}) cannot be enforced by a llama.cpp grammar. It holds integers to at most 15 digits, so it takes an integer's ` +
            `bounds only when they admit every one of them (zod's .int() writes ±9007199254740991); narrower bounds and a number's bounds are refused`,
        );
      case 'required':
        if (!Array.isArray(value) || value.some((name) => typeof name !== 'string')) throw new InvalidInput(`${field}: ${here} must be a list of property names`);
        out.required = value;
        break;
      case 'const':
        count(tally, 'characters', textLength(value), field);
        refuseControl(value, here, field);
        out.const = value;
        break;
      default:
        if (COUNTS.has(key) && !(Number.isInteger(value) && (value as number) >= 0)) {
          throw new InvalidInput(`${field}: ${here} must be a whole number, 0 or more; got ${JSON.stringify(value)}`);
        }
        if (!SUPPORTED.has(key)) {
          throw new InvalidInput(
            `${field}: ${key} (at ${at}) cannot be enforced by a llama.cpp grammar. It enforces type, const, enum, oneOf/anyOf, properties, ` +
              'additionalProperties, items, prefixItems, min/maxItems, min/maxLength, min/maxProperties, $ref and the formats date-time, time and date',
          );
        }
        out[key] = value;
    }
  }
  for (const [low, high] of BOUND_PAIRS) {
    if (typeof out[low] === 'number' && typeof out[high] === 'number' && (out[low] as number) > (out[high] as number)) {
      throw new InvalidInput(`${field}: ${at}.${low} (${out[low] as number}) is above ${at}.${high} (${out[high] as number}), so no answer can follow the schema`);
    }
  }
  // The grammar writes the listed properties and no other name it is told is needed.
  const missing = ((out.required as string[] | undefined) ?? []).filter((name) => !Object.hasOwn((out.properties as Schema | undefined) ?? {}, name));
  if (missing.length > 0) throw new InvalidInput(`${field}: ${at}.required names ${missing.map((n) => JSON.stringify(n)).join(', ')}, not among ${at}.properties, so no answer held to the grammar would have it`);
  return out;
}

// The largest integer the grammar writes: 15 digits (finite-numbers.ts).
const WIDEST_INTEGER = 999_999_999_999_999;

function integerOnly(type: unknown): boolean {
  const types = Array.isArray(type) ? type : [type];
  return types.includes('integer') && types.every((t) => t === 'integer' || t === 'null');
}

function admitsEveryInteger(key: string, bound: number): boolean {
  if (key === 'minimum') return bound <= -WIDEST_INTEGER;
  if (key === 'exclusiveMinimum') return bound < -WIDEST_INTEGER;
  if (key === 'maximum') return bound >= WIDEST_INTEGER;
  return bound > WIDEST_INTEGER;
}

function object(value: unknown, at: string, field: string): Schema {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new InvalidInput(`${field}: ${at} must be a map`);
  return value as Schema;
}

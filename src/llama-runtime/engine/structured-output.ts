import type { Llama, LlamaGrammar } from 'node-llama-cpp';
import { InvalidInput } from '../invalid-input.js';
import type { Guide } from './generate-config.js';
import { finiteNumbers } from './finite-numbers.js';
import { grammarSchema } from './grammar-schema.js';

// Grammars compiled for recent schemas: clients send the same few over and over.
const CACHED_GRAMMARS = 32;

/** The text after which a grammar's output is complete (its stop triggers): the JSON grammars end in four newlines. */
export function grammarStops(grammar: LlamaGrammar): string[] {
  return grammar.stopGenerationTriggers.map((trigger) => (Array.isArray(trigger) ? trigger.filter((t) => typeof t === 'string').join('') : String(trigger)));
}

/**
 * Structured output through llama.cpp grammars: `response_format` json_object (any
 * JSON object) and json_schema (node-llama-cpp turns the schema into a GBNF
 * grammar), and a forced tool call (`tool_choice` "required" or a named function):
 * the reply must then be one `{"name": ..., "arguments": ...}` object whose
 * arguments follow that tool's parameter schema.
 */
export class StructuredOutput {
  private readonly cache = new Map<string, Promise<LlamaGrammar>>();

  constructor(private readonly llama: Llama) {}

  forGuide(guide: Guide): Promise<LlamaGrammar> {
    if (guide.kind === 'json_object') return this.cached('json_object', async () => this.finite(await this.llama.getGrammarFor('json')));
    return this.forSchema(guide.schema, 'response_format.json_schema.schema');
  }

  /** A client's own GBNF grammar (the `grammar` field), parsed by llama.cpp; a 400 when it cannot be. */
  forGrammar(text: string): Promise<LlamaGrammar> {
    return this.cached(`gbnf:${text}`, async () => {
      try {
        return await this.llama.createGrammar({ grammar: text });
      } catch (err) {
        // llama.cpp's parser says why only in its log (stderr); the message names the usual causes.
        throw new InvalidInput(
          `grammar: llama.cpp could not parse this GBNF grammar (${(err as Error).message}): it needs a root rule, every rule it uses defined, no rule that starts with itself (left recursion), and GBNF syntax`,
        );
      }
    });
  }

  /** The grammar a tool_choice forces, or null when the model may answer freely ("auto", "none", absent). */
  forToolChoice(tools: unknown, toolChoice: unknown): Promise<LlamaGrammar> | null {
    if (toolChoice === undefined || toolChoice === null || toolChoice === 'auto' || toolChoice === 'none') return null;
    const list = Array.isArray(tools) ? (tools as Array<{ type?: unknown; function?: { name?: unknown; parameters?: unknown } }>) : [];
    const functions = list.filter((t) => t?.type === 'function' && typeof t.function?.name === 'string');
    if (functions.length === 0) throw new InvalidInput('tool_choice asks for a tool call, but the request has no function tools');
    let chosen = functions;
    if (toolChoice !== 'required') {
      const name = (toolChoice as { function?: { name?: unknown } } | null)?.function?.name;
      if (typeof name !== 'string') throw new InvalidInput('tool_choice must be "none", "auto", "required" or {"type": "function", "function": {"name": ...}}');
      chosen = functions.filter((t) => t.function!.name === name);
      if (chosen.length === 0) {
        throw new InvalidInput(`tool_choice names ${JSON.stringify(name)}, which is not among the tools (${functions.map((t) => t.function!.name as string).join(', ')})`);
      }
    }
    const defs: Record<string, unknown> = {};
    const calls = chosen.map((t) => {
      const index = list.indexOf(t);
      const field = `tools[${index}].function.parameters`;
      // Checked on its own first, so a refusal names the tool's own schema, not the wrapper's.
      const { $defs, ...parameters } = grammarSchema(parameterSchema(t.function!.parameters, field), field);
      // Its definitions go to the wrapper's root, where its refs now point (a Pydantic
      // model with a nested model or an enum has them): each tool's under its own prefix.
      for (const [name, def] of Object.entries(($defs as Record<string, unknown> | undefined) ?? {})) defs[`t${index}-${name}`] = prefixRefs(def, `t${index}-`);
      return { type: 'object', properties: { name: { const: t.function!.name }, arguments: prefixRefs(parameters, `t${index}-`) }, required: ['name', 'arguments'] };
    });
    const wrapper = calls.length === 1 ? calls[0]! : { oneOf: calls };
    return this.forSchema(Object.keys(defs).length > 0 ? { ...wrapper, $defs: defs } : wrapper, 'tools');
  }

  private forSchema(schema: Record<string, unknown>, field: string): Promise<LlamaGrammar> {
    const rewritten = grammarSchema(schema, field);
    return this.cached(JSON.stringify(rewritten), async () => {
      let made: LlamaGrammar;
      try {
        made = await this.llama.createGrammarForJsonSchema(rewritten as never);
      } catch (err) {
        // llama.cpp's parser says why only in its log (stderr): what it refuses in the grammars
        // a schema makes is repetition past its bound (about 2,000, fewer for repeated rules
        // of several parts, such as a string's characters).
        throw new InvalidInput(
          `${field}: this JSON schema cannot be turned into a llama.cpp grammar: ${(err as Error).message}. llama.cpp's parser says why only in its log; ` +
            'what it refuses most is a repetition of more than about 2,000 items (a string of minLength or maxLength 1,000 is already past it: lower minLength, ' +
            'maxLength, minItems or maxItems), then definitions that refer to each other with no way out, and nesting thousands deep',
        );
      }
      return this.finite(made);
    });
  }

  /** The grammar with numbers a JSON parser reads as finite (finite-numbers.ts). */
  private finite(made: LlamaGrammar): Promise<LlamaGrammar> | LlamaGrammar {
    const text = finiteNumbers(made.grammar);
    if (text === made.grammar) return made;
    return this.llama.createGrammar({ grammar: text, stopGenerationTriggers: made.stopGenerationTriggers, trimWhitespaceSuffix: made.trimWhitespaceSuffix });
  }

  private cached(key: string, make: () => Promise<LlamaGrammar>): Promise<LlamaGrammar> {
    let grammar = this.cache.get(key);
    if (grammar) {
      // Most recently used last, so the oldest is the one dropped.
      this.cache.delete(key);
      this.cache.set(key, grammar);
      return grammar;
    }
    grammar = make();
    this.cache.set(key, grammar);
    // A schema that failed is not kept: the next request gets the same error afresh.
    grammar.catch(() => this.cache.delete(key));
    if (this.cache.size > CACHED_GRAMMARS) this.cache.delete(this.cache.keys().next().value!);
    return grammar;
  }
}

/** A schema whose `#/$defs/<name>` refs (grammarSchema's spelling) point to `#/$defs/<prefix><name>`. */
function prefixRefs(node: unknown, prefix: string): unknown {
  if (Array.isArray(node)) return node.map((item) => prefixRefs(item, prefix));
  if (typeof node !== 'object' || node === null) return node;
  return Object.fromEntries(
    Object.entries(node).map(([key, value]) => {
      if (key === '$ref' && typeof value === 'string') return [key, value.replace('#/$defs/', `#/$defs/${prefix}`)];
      // A const's or an enum's values are data, whatever keys they hold.
      return [key, key === 'const' || key === 'enum' ? value : prefixRefs(value, prefix)];
    }),
  );
}

/** A tool's parameters as a schema; a tool without any takes an empty object. */
function parameterSchema(parameters: unknown, field: string): Record<string, unknown> {
  if (parameters === undefined || parameters === null) return { type: 'object', properties: {} };
  if (typeof parameters !== 'object' || Array.isArray(parameters)) throw new InvalidInput(`${field} must be a JSON schema (a map)`);
  return parameters as Record<string, unknown>;
}

import { Environment, Interpreter, Template } from '@huggingface/jinja';

/**
 * Python's `str.strip`, `lstrip` and `rstrip` for @huggingface/jinja's strings, which
 * ignore their argument and always strip whitespace. Chat templates pass one: Qwen3's
 * writes a reply as `content.lstrip('\n')`, so a reply that began with a space lost it
 * here and kept it on the Transformers engine (jinja2 calls Python's own method): the
 * two engines rendered different prompts, and a prefill ended differently.
 *
 * The library exports neither its string value nor its function value, so both are
 * reached through a rendered sample, and the methods are replaced on the shared
 * prototype's method table, once per string (the library builds it on first use).
 */
interface Value {
  type: string;
  value: unknown;
}
type Methods = Map<string, unknown>;
type FunctionValueClass = new (fn: (args: Value[]) => Value) => unknown;
type StringValueClass = new (value: string) => Value;

const WHITESPACE = /\s/;

/** Python's strip of `chars` (none, or no argument: whitespace) from one or both ends. */
export function pythonStrip(text: string, chars: Value | undefined, ends: { start: boolean; end: boolean }): string {
  const strips = chars === undefined || chars.type === 'NullValue' || chars.type === 'UndefinedValue'
    ? (c: string) => WHITESPACE.test(c)
    : (c: string) => String(chars.value).includes(c);
  const codes = Array.from(text);
  let start = 0;
  let end = codes.length;
  if (ends.start) while (start < end && strips(codes[start]!)) start++;
  if (ends.end) while (end > start && strips(codes[end - 1]!)) end--;
  return codes.slice(start, end).join('');
}

let installed = false;

/** Replaces the three methods for every string the library makes from now on (idempotent). */
export function installPythonStripMethods(): void {
  if (installed) return;
  const sample = new Interpreter(new Environment()).run(new Template("{{ 'x' }}").parsed) as unknown as Value;
  const proto = Object.getPrototypeOf(sample) as object;
  const descriptor = Object.getOwnPropertyDescriptor(proto, 'builtins');
  if (sample.type !== 'StringValue' || !descriptor?.get) throw new Error('@huggingface/jinja changed its string values: the strip methods cannot be set (see jinja-strip-methods.ts)');
  const builtins = descriptor.get;
  const StringValue = sample.constructor as StringValueClass;
  const patched = new WeakSet<Methods>();
  Object.defineProperty(proto, 'builtins', {
    configurable: true,
    get(this: Value): Methods {
      const methods = builtins.call(this) as Methods;
      if (!patched.has(methods)) {
        patched.add(methods);
        const FunctionValue = (methods.get('upper') as object).constructor as FunctionValueClass;
        const text = String(this.value);
        const method = (start: boolean, end: boolean) => new FunctionValue((args) => new StringValue(pythonStrip(text, args[0], { start, end })));
        methods.set('strip', method(true, true));
        methods.set('lstrip', method(true, false));
        methods.set('rstrip', method(false, true));
      }
      return methods;
    },
  });
  installed = true;
}

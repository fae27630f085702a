import { Environment, Interpreter, Template } from '@huggingface/jinja';
import { installPythonStripMethods } from './jinja-strip-methods.js';

/**
 * A chat template rendered under limits. A template is code from a registration or a
 * model file, and @huggingface/jinja runs it with none: `range(100000000)` alone filled
 * the runtime's heap and killed it, and a loop that doubles a string needs only forty
 * turns to do the same. Python's Jinja sandbox (the Transformers engine's renderer) caps
 * `range` at 100,000 items; this does the same and also bounds the whole render's work,
 * so that a hostile template costs one refused request, never the replica.
 *
 * - Steps: every node the interpreter evaluates counts one, and every turn of a loop
 *   four. The built-in families' templates take 35-85 per message (Qwen3's with 20
 *   tools: 82), so a million is some 12,000 messages, while a loop nested in a loop of
 *   the capped range would take ten billion. A million steps take one to two seconds
 *   of a shared core, inside the 10 s the control plane waits for a heartbeat (the
 *   render holds the runtime's event loop).
 * - Bytes: every string a node evaluates to counts its length, and every list eight
 *   per item, once each. Everything a render builds was once such a value, so this
 *   bounds its memory, which a count of steps alone does not
 *   (`{% set ns.s = ns.s ~ ns.s %}`). Real templates build a few times their output
 *   (7-10 million over 10,000 messages), and 64 MiB leaves room for a prompt of a
 *   million-token context.
 */
export const TEMPLATE_LIMITS = { maxRange: 100_000, maxSteps: 1_000_000, maxBytes: 64 * 1024 * 1024 };

/** A template that went past one of TEMPLATE_LIMITS. */
export class TemplateLimitExceeded extends Error {}

/**
 * A runtime value of the library's interpreter. Its index.d.ts imports its own types
 * from paths without extensions, which NodeNext resolution does not follow, so
 * Environment and Interpreter reach this file untyped: these are the parts used here.
 */
interface Value {
  type: string;
  value: unknown;
}

interface InterpreterShape {
  evaluate(statement: unknown, environment: Environment): Value;
  run(program: unknown): Value;
}
const TypedInterpreter = Interpreter as unknown as new (env: Environment) => InterpreterShape;

type Block = (statements: unknown, environment: Environment) => Value;

class BoundedInterpreter extends TypedInterpreter {
  private steps = 0;
  private bytes = 0;
  private readonly counted = new WeakSet<object>();

  constructor(env: Environment) {
    super(env);
    // Every turn of a loop and every macro call runs its body through evaluateBlock,
    // without an evaluate of its own when the body is empty: count those too, as four
    // steps, since the library makes two scopes and a nine-entry `loop` map for each
    // turn (an empty loop's turn measured four times a node's time). The library's
    // types call the method private, hence the cast.
    const self = this as unknown as { evaluateBlock: Block };
    const block = self.evaluateBlock.bind(this);
    self.evaluateBlock = (statements, environment) => {
      this.step(4);
      return block(statements, environment);
    };
  }

  private step(weight = 1): void {
    this.steps += weight;
    if (this.steps > TEMPLATE_LIMITS.maxSteps) {
      throw new TemplateLimitExceeded(`the template took more than ${TEMPLATE_LIMITS.maxSteps} steps`);
    }
  }

  override evaluate(statement: unknown, environment: Environment): Value {
    this.step();
    const value = super.evaluate(statement, environment);
    // Strings and lists: the only values whose size a template can grow. Each counts
    // once: looking up `messages` in every turn of a loop over it builds nothing.
    if ((value.type === 'StringValue' || value.type === 'ArrayValue' || value.type === 'TupleValue') && !this.counted.has(value)) {
      this.counted.add(value);
      // A list item holds a pointer: eight bytes, where a character takes one or two.
      this.bytes += value.type === 'StringValue' ? (value.value as string).length : 8 * (value.value as unknown[]).length;
      if (this.bytes > TEMPLATE_LIMITS.maxBytes) {
        throw new TemplateLimitExceeded(`the template built more than ${TEMPLATE_LIMITS.maxBytes} bytes of text and lists`);
      }
    }
    return value;
  }
}

/** Python's `range`, as the library has it, refused past the sandbox's size. */
function boundedRange(start: number, stop?: number, step = 1): number[] {
  if (stop === undefined) [start, stop] = [0, start];
  if (step === 0) throw new Error('range() step must not be zero');
  const length = Math.max(0, Math.ceil((stop - start) / step));
  if (length > TEMPLATE_LIMITS.maxRange) {
    throw new TemplateLimitExceeded(`range() of ${length} items; templates may range over at most ${TEMPLATE_LIMITS.maxRange}`);
  }
  return Array.from({ length }, (_, i) => start + i * step);
}

const pad2 = (n: number): string => String(n).padStart(2, '0');

/** The library's `strftime_now`: the directives chat templates use, in local time. */
function strftimeNow(format: string): string {
  const now = new Date();
  const month = (style: 'long' | 'short'): string => new Intl.DateTimeFormat(undefined, { month: style }).format(now);
  const fields: Record<string, () => string> = {
    '%Y': () => String(now.getFullYear()),
    '%m': () => pad2(now.getMonth() + 1),
    '%d': () => pad2(now.getDate()),
    '%b': () => month('short'),
    '%B': () => month('long'),
    '%H': () => pad2(now.getHours()),
    '%M': () => pad2(now.getMinutes()),
    '%%': () => '%',
  };
  return format.replace(/%[YmdbBHM%]/g, (token) => fields[token]?.() ?? token);
}

/**
 * The globals the library's own render declares (it does not export them), with `range`
 * bounded: a name a template or its context cannot declare again.
 */
const GLOBALS: Record<string, unknown> = {
  false: false,
  true: true,
  none: null,
  False: false,
  True: true,
  None: null,
  raise_exception: (message: unknown) => {
    throw new Error(String(message));
  },
  range: boundedRange,
  strftime_now: strftimeNow,
};

export class BoundedTemplate {
  private readonly template: Template;

  /** Parses `source` as transformers does (trim_blocks, lstrip_blocks); throws what the parser throws. */
  constructor(source: string) {
    installPythonStripMethods();
    this.template = new Template(source);
  }

  /** The text `context` renders to; throws TemplateLimitExceeded, or the template's own errors. */
  render(context: Record<string, unknown>): string {
    const env = new Environment();
    for (const [name, value] of Object.entries(GLOBALS)) env.set(name, value);
    for (const [name, value] of Object.entries(context)) env.set(name, value);
    return new BoundedInterpreter(env).run(this.template.parsed).value as string;
  }
}

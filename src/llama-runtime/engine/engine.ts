/** What a call's method gets besides its arguments. */
export interface CallContext {
  readonly stream: boolean;
  /** Fires on ABORT: the method stops before its next CHUNK and throws CallAborted. */
  readonly signal: AbortSignal;
  chunk(value: Record<string, unknown>): void;
}

/** A method of an engine: the RESULT value (a stream: the value of its last CHUNK). */
export type Method = (args: unknown[], kwargs: Record<string, unknown>, call: CallContext) => Promise<Record<string, unknown>>;

/** A loaded engine, as the call server sees it (the Python runtime's Engine). */
export interface Engine {
  readonly abilities: string[];
  readonly methods: Readonly<Record<string, Method>>;
  /** Keys added to the model's description in READY. */
  describe(): Record<string, unknown>;
  /** Calls holding a sequence now (the stats' batch size). */
  running(): number;
  /** Processes the engine started and drives (llama-server): their memory is the replica's too. */
  enginePids(): number[];
  close(): Promise<void>;
}

/** Checks a CALL's keyword arguments against the ones a method takes, as Python's signatures do. */
export function onlyKwargs(method: string, kwargs: Record<string, unknown>, allowed: readonly string[]): void {
  const extra = Object.keys(kwargs).filter((k) => !allowed.includes(k));
  if (extra.length > 0) throw new TypeError(`${method}() got unexpected keyword arguments: ${extra.join(', ')}`);
}

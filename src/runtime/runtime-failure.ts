import { clipText, ECHO_LIMIT } from '../errors/clipped-text.js';

/**
 * How a runtime call or load can fail, as plain values the supervisor maps to HTTP
 * errors. runtime/ knows nothing of HTTP, so it speaks in these kinds only.
 */
export type RuntimeFailureKind =
  /** The engine rejected the input (ValueError and friends), or the model itself is bad. */
  | 'invalid'
  /** The engine failed for another reason. */
  | 'internal'
  /** The call was aborted before it finished. */
  | 'aborted'
  | 'unknown_method'
  /** The runtime process is gone or stopped answering. */
  | 'dead'
  /** The launch was cancelled. */
  | 'cancelled'
  /** No node of the cluster can hold the replica now (cluster mode). */
  | 'no_fit'
  /** A load whose files are not here could not reach their hub now (LOAD_FAILED `unavailable`). */
  | 'unavailable';

export class RuntimeFailure extends Error {
  constructor(
    readonly kind: RuntimeFailureKind,
    message: string,
    /** The request field an `invalid` ERROR names (its `param`), dotted: `dimensions`, `messages.0.content.1`. */
    readonly param: string | null = null,
  ) {
    // An engine's message often quotes the input that it refused (sklearn, pandas).
    super(clipText(message, ECHO_LIMIT));
    this.name = 'RuntimeFailure';
  }
}

/** How a dead runtime's message carries its last lines (runtime-process.ts): the operator's, not a caller's. */
export const LAST_OUTPUT_MARK = '; its last output: ';

/** A death's message split into how it died and the runtime's last lines ('' when none). */
export function splitLastOutput(message: string): { reason: string; output: string } {
  const at = message.indexOf(LAST_OUTPUT_MARK);
  return at === -1 ? { reason: message, output: '' } : { reason: message.slice(0, at), output: message.slice(at) };
}

const KINDS: ReadonlySet<string> = new Set(['invalid', 'internal', 'aborted', 'unknown_method', 'dead', 'cancelled', 'no_fit', 'unavailable']);

export function failureKind(value: unknown): RuntimeFailureKind {
  return typeof value === 'string' && KINDS.has(value) ? (value as RuntimeFailureKind) : 'internal';
}

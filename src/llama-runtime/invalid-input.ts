/**
 * What the caller got wrong (a bad argument, a prompt too long, a bad model file):
 * answered as ERROR `invalid` or LOAD_FAILED `invalid`, the Python runtime's
 * ValueError/TypeError and InvalidModel. Anything else thrown is `internal`.
 *
 * `param` names the request field, as the protocol's ERROR carries it
 * (docs/runtime-protocol.md, "Calls"); absent, fieldOf() reads it from the message.
 */
export class InvalidInput extends Error {
  override name = 'InvalidInput';
  constructor(
    message: string,
    readonly param?: string,
  ) {
    super(message);
  }
}

/**
 * The model's files are not here and their hub could not be reached now: LOAD_FAILED
 * `unavailable`, which the control plane answers 503 (try again, or use a mirror), not
 * 400; the Python runtime's SourceUnreachable.
 */
export class SourceUnreachable extends InvalidInput {
  override name = 'SourceUnreachable';
}

/** The request fields this runtime's messages start with (`top_p must be ...`, `logit_bias: ...`). */
const FIELDS = new Set([
  'max_tokens', 'temperature', 'top_p', 'top_k', 'min_p', 'seed', 'stop', 'stop_token_ids', 'repetition_penalty',
  'frequency_penalty', 'presence_penalty', 'logit_bias', 'logprobs', 'top_logprobs', 'response_format', 'echo',
  'ignore_eos', 'min_tokens', 'grammar', 'messages', 'tools', 'tool_calls', 'tool_choice', 'chat_template_kwargs', 'dimensions', 'truncate', 'input',
]);

/**
 * The field an error is about: its own `param`, or the field its message starts with
 * (`messages[2]: ...` is `messages.2`, as the HTTP request spells it); null when the
 * message names none.
 */
export function fieldOf(err: unknown): string | null {
  if (err instanceof InvalidInput && err.param) return err.param;
  const message = err instanceof Error ? err.message : '';
  const match = /^([a-z_]+)(?:\[(\d+)\])?(?:\.[a-z_0-9]+)*(?=[:\s])/.exec(message);
  if (!match || !FIELDS.has(match[1]!)) return null;
  return match[2] === undefined ? match[1]! : `${match[1]}.${match[2]}`;
}

/** A call stopped by its ABORT: answered as ERROR `aborted`. */
export class CallAborted extends Error {
  override name = 'CallAborted';
  constructor() {
    super('The call was aborted');
  }
}

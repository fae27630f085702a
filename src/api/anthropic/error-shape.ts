import { errorBody, type HangarError } from '../../errors/hangar-error.js';

/** The routes Anthropic's SDKs call: Messages, count_tokens, and the `/anthropic` prefix. */
export function servesAnthropic(url: string): boolean {
  return url.startsWith('/anthropic/') || url === '/v1/messages' || url.startsWith('/v1/messages/');
}

/**
 * Anthropic's name for an error's kind (its SDKs and proxies branch on it): the
 * contract's types where Anthropic has the same, and its own for a body too large, a
 * service that is overloaded or unavailable, and any other failure of ours. A 409 has
 * no name of its own there: an invalid request.
 */
export function anthropicErrorType(error: HangarError): string {
  if (error.status === 413) return 'request_too_large';
  if (error.status === 409) return 'invalid_request_error';
  if (error.status === 503 || error.status === 529) return 'overloaded_error';
  if (error.status >= 500) return 'api_error';
  return error.type;
}

/**
 * An error as Anthropic answers one, `{"type": "error", "error": {type, message},
 * "request_id"}`, keeping the contract's fields beside it (`detail`, and the error's
 * `param` and `code`), so a client of either shape reads it (docs/anthropic.md).
 */
export function anthropicErrorBody(error: HangarError, requestId: string): Record<string, unknown> {
  const body = errorBody(error);
  return { type: 'error', ...body, error: { ...body.error, type: anthropicErrorType(error) }, request_id: requestId };
}

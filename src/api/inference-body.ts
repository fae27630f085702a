import type { FastifyRequest } from 'fastify';

/**
 * The JSON body of an inference request (a POST that needs `models:read` and names a
 * `model`), or null for any other request: what key admission and request tracking
 * both act on, in preHandlers that run on every request.
 */
export function inferenceBody(request: FastifyRequest): (Record<string, unknown> & { model: string }) | null {
  const body = request.body as Record<string, unknown> | null | undefined;
  if (request.method !== 'POST' || request.routeOptions.config.permission !== 'models:read' || typeof body?.model !== 'string') return null;
  return body as Record<string, unknown> & { model: string };
}

/**
 * The most a request may generate, when it says (chat's two spellings, completions',
 * Responses'), no more than the model's context each: the per-choice limit times its choices (`n`, and on completions each
 * prompt of a list), as OpenAI estimates a request against a tokens-per-minute limit.
 */
export function wantedTokens(body: Record<string, unknown>, contextLength: number | null = null): number | null {
  for (const field of ['max_completion_tokens', 'max_tokens', 'max_output_tokens']) {
    const value = body[field];
    if (typeof value === 'number' && Number.isFinite(value) && value > 0) return Math.min(value, contextLength ?? Infinity) * choicesOf(body);
  }
  return null;
}

/** How many answers a request asks for; a body the schema will refuse counts as one. */
function choicesOf(body: Record<string, unknown>): number {
  const n = typeof body.n === 'number' && Number.isInteger(body.n) && body.n > 1 ? body.n : 1;
  // A list of strings or of token-id lists is several prompts; a flat list of token ids is one.
  const prompts = Array.isArray(body.prompt) && body.prompt.length > 1 && body.prompt.every((p) => typeof p === 'string' || Array.isArray(p)) ? body.prompt.length : 1;
  return n * prompts;
}

import fastifyCors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';

/**
 * Headers a browser app may read from our answers: the request id, the control
 * plane's overhead, and the rate-limit headers of database keys (docs/auth.md).
 */
const EXPOSED = [
  'x-request-id',
  'x-hangar-overhead-ms',
  'retry-after',
  'x-ratelimit-limit-requests',
  'x-ratelimit-remaining-requests',
  'x-ratelimit-reset-requests',
  'x-ratelimit-limit-tokens',
  'x-ratelimit-remaining-tokens',
  'x-ratelimit-reset-tokens',
];

/**
 * CORS (docs/decisions.md, "CORS"), registered before the auth guard: @fastify/cors
 * answers a preflight in its own onRequest hook, and a preflight carries no
 * credential. Any origin by default, as Xinference; credentials travel in the
 * `Authorization` (or `x-api-key`) header, never cookies, so `*` is safe to answer.
 * Allowed request headers are those the preflight asks for (the OpenAI and Anthropic
 * SDKs send their own `x-stainless-*` and `anthropic-*` ones).
 */
export async function installCors(app: FastifyInstance, origins: '*' | string[] | null): Promise<void> {
  if (origins === null) return;
  const allowed = origins === '*' ? null : new Set(origins);
  await app.register(fastifyCors, {
    // Decided per request: one without an Origin header (an SDK, curl: never a browser
    // page) gets no CORS headers at all, which keeps them off the hot path of API
    // clients (about 5 µs a request in bench/auth-limits.ts's echo load).
    origin: (origin: string | undefined, cb: (err: Error | null, allow: string | boolean) => void) => {
      if (origin === undefined) return cb(null, false);
      cb(null, allowed === null ? '*' : allowed.has(origin) ? origin : false);
    },
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    exposedHeaders: EXPOSED,
    maxAge: 600,
    // The OPTIONS route it adds stays out of the OpenAPI document.
    hideOptionsRoute: true,
  });
}

import type { FastifyInstance } from 'fastify';
import { BODY_LIMIT_BYTES } from './json-body.js';

const KiB = 1024;
const MiB = 1024 * KiB;

/**
 * Each route's largest body (after decompression): what its requests need, so a
 * route that takes a name and a number cannot be made to buffer 64 MiB. Chat carries
 * images as `data:` URLs (50 MiB: OpenAI's cap on a request with images); flexible models take batches of rows (the 64 MiB of before).
 * Multipart uploads have their own per-file limits (multipart/form.ts).
 */
const LIMITS: ReadonlyArray<[string, number]> = [
  ['/token', 64 * KiB],
  ['/v1/chat/completions', 50 * MiB],
  ['/v1/messages', 50 * MiB],
  ['/v1/responses', 50 * MiB],
  // The same body, counted instead of answered.
  ['/v1/responses/input_tokens', 50 * MiB],
  ['/anthropic/v1/messages', 50 * MiB],
  ['/v1/messages/count_tokens', 50 * MiB],
  ['/anthropic/v1/messages/count_tokens', 50 * MiB],
  ['/v1/completions', 4 * MiB],
  ['/v1/embeddings', 16 * MiB],
  ['/v1/rerank', 16 * MiB],
  ['/v2/rerank', 16 * MiB],
  ['/v1/convert_ids_to_tokens', 4 * MiB],
  ['/v1/flexible/infers', BODY_LIMIT_BYTES],
];

/** Every other route: launches, registrations (a chat template fits), admin, prompts for media. */
export const DEFAULT_ROUTE_BODY_LIMIT = 1 * MiB;

export function bodyLimitFor(url: string): number {
  return LIMITS.find(([route]) => route === url)?.[1] ?? DEFAULT_ROUTE_BODY_LIMIT;
}

/** Sets each route's `bodyLimit` as it is added (unless the route set its own); install before any route. */
export function installBodyLimits(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    route.bodyLimit ??= bodyLimitFor(route.url);
  });
}

export function describeLimit(bytes: number): string {
  // One decimal at most: a budget's holding is any byte count ("1023.99 KiB" said nothing more).
  const round = (n: number): number => Math.round(n * 10) / 10;
  return bytes >= MiB ? `${round(bytes / MiB)} MiB` : `${round(bytes / KiB)} KiB`;
}

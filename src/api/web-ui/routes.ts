import { existsSync } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { HangarError } from '../../errors/hangar-error.js';

export interface WebUiOptions {
  /** The folder `vite build` wrote (web/dist): index.html, assets/ with hashed names. */
  root: string;
}

/**
 * The browser UI (issue 10): static files only, no server-side rendering.
 *
 * - `/assets/*`: Vite names every asset after a hash of its content, so a name never
 *   changes meaning: one year, `immutable`. The build writes `.br` and `.gz` next to
 *   each file and they are sent as they are (`preCompressed`): no CPU per request, and
 *   API answers (SSE streams above all) never pass through a compressor.
 * - `/`, `/ui` and `/ui/*`: index.html with `no-cache` (revalidated by ETag every time,
 *   so a new build is picked up at once). The app's own pages live under `/ui/`, so a
 *   reload of `/ui/running/LLM` finds the app, while every other unknown path (an
 *   unknown `/v1/...` above all) keeps its JSON 404.
 *
 * These routes are public (src/auth/public-routes.ts): the login page must load
 * without a credential. They hold no data; every API call the page makes is guarded.
 */
/**
 * The page loads only its own files and talks only to this origin: an injected script
 * or a framing page gets nothing. Audio from text-to-speech plays from a blob: URL.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "img-src 'self' data: blob:",
  "media-src 'self' blob:",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export const webUiRoutes: FastifyPluginAsync<WebUiOptions> = async (app, { root }) => {
  const index = path.join(root, 'index.html');
  await app.register(fastifyStatic, {
    root: path.join(root, 'assets'),
    prefix: '/assets/',
    wildcard: true,
    index: false,
    preCompressed: true,
    maxAge: '365d',
    immutable: true,
  });

  const sendIndex = async (reply: FastifyReply) => {
    if (!existsSync(index)) throw new HangarError('web_ui_not_built', [index]);
    reply.header('cache-control', 'no-cache');
    reply.header('content-security-policy', CONTENT_SECURITY_POLICY);
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'same-origin');
    return reply.sendFile('index.html', root, { cacheControl: false });
  };
  const schema = { hide: true };
  app.get('/', { schema }, (_request, reply) => sendIndex(reply));
  app.get('/ui', { schema }, (_request, reply) => sendIndex(reply));
  app.get('/ui/*', { schema }, (_request, reply) => sendIndex(reply));
};

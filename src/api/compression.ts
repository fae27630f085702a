import fastifyCompress from '@fastify/compress';
import type { FastifyInstance } from 'fastify';

/** Bodies smaller than this go as they are: compressing them costs more than it saves. */
export const COMPRESS_THRESHOLD_BYTES = 256;

/**
 * JSON, text, HTML, CSS and JavaScript answers gzipped, brotli'd or deflated when the
 * client's `Accept-Encoding` asks (docs/decisions.md, "Compression"), through
 * @fastify/compress: brotli at quality 4 (its default; 11 costs ~50x the CPU for a few
 * percent), only above COMPRESS_THRESHOLD_BYTES (a model list of one model is ~750 bytes).
 *
 * - Never SSE: streams are written to the socket by sse/sse-response.ts, token by token;
 *   a compressor would hold tokens back until its buffer fills, and the type is excluded too.
 * - Never binary media (audio, images, octet-stream): already compressed formats.
 * - Requests are decompressed by request-encoding.ts (its limits and error codes), so
 *   the plugin's own request decompression is turned off on every route.
 */
export async function installCompression(app: FastifyInstance): Promise<void> {
  // Runs before the plugin's own onRoute hook (registered next), which reads it.
  app.addHook('onRoute', (route) => {
    route.decompress = false;
  });
  await app.register(fastifyCompress, {
    global: true,
    threshold: COMPRESS_THRESHOLD_BYTES,
    encodings: ['br', 'gzip', 'deflate'],
    customTypes: /^text\/(?!event-stream)|[+/]json(?:;|$)|[+/]xml(?:;|$)|\/javascript(?:;|$)/u,
  });
}

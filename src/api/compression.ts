import fastifyCompress from '@fastify/compress';
import type { FastifyInstance } from 'fastify';

/** Bodies smaller than this go as they are: compressing them costs more than it saves. */
export const COMPRESS_THRESHOLD_BYTES = 256;
/**
 * Inference answers (POST routes that need `models:read`) are compressed only from
 * this size: OpenAI's Python SDK asks for gzip on every request, and gzipping a short
 * chat answer (~650 bytes) costs ~30 µs of CPU, about 8% of what the control plane
 * spends on a whole request, to save a few hundred bytes. Embeddings and long answers
 * are well above it.
 */
export const INFERENCE_COMPRESS_THRESHOLD_BYTES = 1024;

const OPTIONS = {
  encodings: ['br', 'gzip', 'deflate'] as Array<'br' | 'gzip' | 'deflate'>,
  customTypes: /^text\/(?!event-stream)|[+/]json(?:;|$)|[+/]xml(?:;|$)|\/javascript(?:;|$)/u,
};

/**
 * JSON, text, HTML, CSS and JavaScript answers gzipped, brotli'd or deflated when the
 * client's `Accept-Encoding` asks (docs/decisions.md, "Compression"), through
 * @fastify/compress: brotli at quality 4 (its default; 11 costs ~50x the CPU for a few
 * percent), only above COMPRESS_THRESHOLD_BYTES (a model list of one model is ~750
 * bytes), or INFERENCE_COMPRESS_THRESHOLD_BYTES for inference answers.
 *
 * - Never SSE: streams are written to the socket by sse/sse-response.ts, token by token;
 *   a compressor would hold tokens back until its buffer fills, and the type is excluded too.
 * - Never binary media (audio, images, octet-stream): already compressed formats.
 * - Requests are decompressed by request-encoding.ts (its limits and error codes), so
 *   the plugin's own request decompression is turned off on every route.
 */
export async function installCompression(app: FastifyInstance): Promise<void> {
  // Runs before the plugin's own onRoute hook (registered next), which reads both.
  app.addHook('onRoute', (route) => {
    route.decompress = false;
    const methods = [route.method].flat();
    // A route's options replace the plugin's, so they are given whole.
    if (methods.includes('POST') && route.config?.permission === 'models:read') route.compress = { ...OPTIONS, threshold: INFERENCE_COMPRESS_THRESHOLD_BYTES };
  });
  await app.register(fastifyCompress, { ...OPTIONS, global: true, threshold: COMPRESS_THRESHOLD_BYTES });
}

import type { FastifyRequest } from 'fastify';

/**
 * Whether a request's body is a multipart form, from its header: the multipart parser
 * reads the raw request itself, so the hooks that wrap the body stream (decoding, the
 * body budget) must leave it alone, and it marks a request multipart only after them.
 */
export function isMultipartBody(request: FastifyRequest): boolean {
  return /^multipart\//i.test(String(request.headers['content-type'] ?? '').trim());
}

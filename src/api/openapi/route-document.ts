import type { FastifySchema, RouteOptions } from 'fastify';
import { jsonSchemaTransform } from 'fastify-type-provider-zod';
import { isPublicRoute } from '../../auth/public-routes.js';
import { ANSWERS, errorAnswer } from './answer-schemas.js';

type TransformInput = Parameters<typeof jsonSchemaTransform>[0];

/** Either credential header opens every guarded route (guard.ts reads both everywhere). */
const SECURITY = [{ bearerAuth: [] }, { anthropicApiKey: [] }];

/**
 * One route's entry in the OpenAPI document: the zod schemas it validates with (body,
 * query, params), plus what generators need and fastify does not validate: an upload
 * route's multipart body (form-schema.ts), the 200 answer (answer-schemas.ts), the
 * error body as every 4xx/5xx answer, and the bearer scheme on every guarded route.
 */
export function documentRoute(input: TransformInput): ReturnType<typeof jsonSchemaTransform> {
  const route = (input as { route?: RouteOptions }).route;
  const methods = route ? [route.method].flat() : [];
  const method = methods.find((m) => m !== 'HEAD') ?? 'GET';
  const { multipartBody, ...schema } = (input.schema ?? {}) as FastifySchema & Record<string, unknown>;
  if (schema.hide) return jsonSchemaTransform(input);
  const documented: Record<string, unknown> = { ...schema };
  if (multipartBody) documented.body = multipartBody;
  const answer = ANSWERS[`${method} ${input.url}`];
  const error = (description: string) => ({ description, content: { 'application/json': { schema: errorAnswer } } });
  documented.response = {
    ...(answer ? { 200: answer } : {}),
    '4XX': error('A refused request: the error body of docs/errors.md, `param` naming the field'),
    '5XX': error('A failure on the service side (the same body)'),
    ...((schema.response as object | undefined) ?? {}),
  };
  if (!isPublicRoute(method, input.url)) {
    documented.security = SECURITY;
  }
  return jsonSchemaTransform({ ...input, schema: documented } as TransformInput);
}

/** The security schemes every guarded route refers to. */
export const SECURITY_SCHEMES = {
  bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key (sk-...) or a login token from POST /token (docs/auth.md)' },
  anthropicApiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: "Anthropic's SDKs' header, taken on every route; the same keys as bearerAuth" },
} as const;

/**
 * The document as a service with auth off describes itself: nothing asks for a
 * credential (the schemes stay listed, unused). A copy: the plugin's cached document
 * is never changed.
 */
export function withoutSecurity(document: Record<string, unknown>): Record<string, unknown> {
  const paths = document.paths as Record<string, Record<string, Record<string, unknown>>>;
  const open: Record<string, Record<string, Record<string, unknown>>> = {};
  for (const [path, operations] of Object.entries(paths)) {
    open[path] = {};
    for (const [method, operation] of Object.entries(operations)) {
      const { security: _security, ...rest } = operation;
      open[path][method] = rest;
    }
  }
  return { ...document, paths: open };
}

import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { jsonSyntaxReason } from '../config/json-syntax.js';
import { HangarError, errorBody } from '../errors/hangar-error.js';
import { closedByClient } from './client-disconnect.js';
import { BODY_LIMIT_BYTES } from './json-body.js';
import { namingField, specificIssue } from './validation-issue.js';
import { describeLimit } from './body-limits.js';
import { settleUnreadBody } from './unread-body.js';
import { abortedError } from './request-tracking.js';
import { anthropicErrorBody, servesAnthropic } from './anthropic/error-shape.js';

/**
 * The one place where failures become HTTP answers (contract §1): every error, on
 * every route, gets the same body with `detail` and `error`. 5xx bodies carry the
 * request id, never a stack trace.
 */
export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, request, reply) => sendError(reply, request, toHangarError(err, request)));
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? request.url;
    // A path that is served under other methods is a 405 with `Allow`, as FastAPI
    // (Xinference) answers: a client that sent GET to a POST route learns that it is
    // the method, not the path, that is wrong.
    // A route of this very method that found nothing (a static file missing) is a 404.
    const allowed: string[] = ROUTE_METHODS.filter((method) => app.findRoute({ method, url: path }) !== null);
    const own = request.method === 'HEAD' ? 'GET' : request.method;
    if (allowed.length > 0 && !allowed.some((method) => method === own)) {
      if (allowed.includes('GET')) allowed.push('HEAD');
      reply.header('allow', allowed.join(', '));
      sendError(reply, request, new HangarError('method_not_allowed', [request.method, path, allowed.join(', ')]));
      return;
    }
    sendError(reply, request, new HangarError('route_not_found', [request.method, path]));
  });
}

const ROUTE_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** The longest path parameter read, as sent (percent-escapes counted): a 100-character uid of 4-byte characters is 1,200. */
export const MAX_PATH_PARAM_LENGTH = 2048;

/**
 * fastify's answers before any route runs (a path that does not decode, a parameter
 * over the router's limit), in the contract's shape: its own body had no `detail`, no
 * `error` object and no request id.
 */
export function frameworkErrors(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const path = (request.raw.url ?? '').split('?')[0] ?? '';
  const shown = path.length > 200 ? `${path.slice(0, 200)}...` : path;
  const error = err.code === 'FST_ERR_MAX_PARAM_LENGTH'
    ? new HangarError('path_segment_too_long', [shown, MAX_PATH_PARAM_LENGTH], { cause: err })
    : err.code === 'FST_ERR_BAD_URL'
      ? new HangarError('bad_url', [shown], { cause: err })
      : new HangarError('internal_error', [String(request.id)], { cause: err });
  reply.header('x-request-id', request.id);
  sendError(reply, request, error);
  // Answered outside the request lifecycle, so the metrics' onResponse hook never sees
  // these: counted here, under the route label of every unrouted request.
  const arrived = (request as { arrivedAt?: number }).arrivedAt;
  request.server.metrics?.answered(request.method, 'unknown', error.status, '', arrived === undefined ? 0 : (performance.now() - arrived) / 1000, null);
}

/**
 * A failure of ours is logged with its stack; a 503 (the model is loading, was
 * terminated or cancelled, the hub is out of reach) is a state the service is in, not a
 * fault: a warning with its code, which said as an error with a stack it drowned the
 * real ones. 4xx are the client's and go to the request log only.
 */
export function logFailure(request: FastifyRequest, error: HangarError): void {
  if (error.status === 503) request.log.warn({ code: error.code }, error.message);
  else if (error.status >= 500) request.log.error({ err: error.cause ?? error, code: error.code }, error.message);
}

export function sendError(reply: FastifyReply, request: FastifyRequest, error: HangarError): FastifyReply {
  logFailure(request, error);
  // Answered before the body was read to its end: see unread-body.ts. fastify marks
  // every body-parser error `Connection: close`; a body we drain instead keeps the
  // connection, so a client still sending it is not cut off (EPIPE) before the answer.
  if (settleUnreadBody(request.raw)) reply.header('connection', 'close');
  else if (reply.hasHeader('connection')) reply.removeHeader('connection');
  // Anthropic's routes answer in Anthropic's shape too (anthropic/error-shape.ts), with its `request-id` header.
  if (servesAnthropic(request.routeOptions.url ?? request.url)) {
    return reply.code(error.status).headers({ ...error.headers, 'request-id': String(request.id) }).send(anthropicErrorBody(error, String(request.id)));
  }
  return reply.code(error.status).headers(error.headers).send(errorBody(error));
}

/**
 * A model named in the path (`/v1/models/{model_uid}/...`) is named `model_uid`, as the
 * client wrote it; the supervisor's errors say `model`, the body field of inference.
 */
function namedAsSent(err: HangarError, request: FastifyRequest): HangarError {
  if (err.param !== 'model') return err;
  const params = request.params as Record<string, unknown> | undefined;
  const body = request.body as Record<string, unknown> | null | undefined;
  return typeof params?.model_uid === 'string' && typeof body?.model !== 'string' ? err.withParam('model_uid') : err;
}

function toHangarError(err: FastifyError, request: FastifyRequest): HangarError {
  // The runtime call failed because the abort route stopped it: say that, not 503.
  const aborted = abortedError(request);
  if (aborted) return aborted;
  if (closedByClient(request)) return new HangarError('client_closed', [String(request.id)], { cause: err });
  if (err instanceof HangarError) return namedAsSent(err, request);
  if (hasZodFastifySchemaValidationErrors(err)) {
    // No body at all (none sent, or an empty one) where the route reads one.
    if (err.validationContext === 'body' && (request.body === undefined || request.body === null)) {
      // A multipart body is not read on a JSON route: it was there, and "no body" misled.
      const takes = request.routeOptions.url === '/token' ? 'a JSON object or form fields (application/x-www-form-urlencoded)' : 'a JSON object';
      const type = String(request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      const text = type.startsWith('multipart/') ? `This route does not read ${type} bodies; it takes ${takes}` : `The request has no body; this route takes ${takes}`;
      return new HangarError('invalid_field', [text], { param: null, cause: err });
    }
    const first = err.validation[0];
    const issue = first ? specificIssue({ ...(first.params as object), code: first.keyword, path: first.instancePath === '/' ? [] : first.instancePath.slice(1).split('/'), message: first.message ?? 'invalid value' }) : undefined;
    // A query or path parameter is named as the client wrote it (`window`, as OpenAI names
    // a body field), not by Fastify's part of the request (`querystring.window`).
    // An unknown field of a strict body is named itself, not the object that holds it.
    const unknown = issue?.code === 'unrecognized_keys' ? (issue as { keys?: string[] }).keys?.[0] : undefined;
    // A query or path parameter is one name, whatever its parsed value's shape (a
    // comma list read as an array was `group_by.0`).
    const inUrl = err.validationContext === 'querystring' || err.validationContext === 'params';
    const field = inUrl ? String(issue?.path?.[0] ?? '') : [(issue?.path ?? []).join('.'), unknown].filter(Boolean).join('.');
    const message = issue?.message ?? 'invalid value';
    const text = namingField(field, message);
    return new HangarError('invalid_field', [text], { param: field || null, cause: err });
  }
  switch (err.code) {
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new HangarError('invalid_json', ['the body is empty'], { cause: err });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new HangarError('unsupported_media_type', [String(request.headers['content-type'] ?? 'none')], { cause: err });
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new HangarError('payload_too_large', [`the body is over the ${describeLimit(request.routeOptions.bodyLimit ?? BODY_LIMIT_BYTES)} limit of ${request.routeOptions.url ?? 'this route'} (decompressed, when it was sent compressed)`], { cause: err });
  }
  if (err instanceof SyntaxError || err.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
    return new HangarError('invalid_json', [jsonSyntaxReason(err)], { cause: err });
  }
  // The web UI's files (@fastify/static): a path that climbs out of the folder (`/assets/../x`)
  // is its 403 "Forbidden", a missing file its 404; either is no such route here.
  if ((err.statusCode === 403 || err.statusCode === 404) && (request.routeOptions.url ?? '').startsWith('/assets/')) {
    return new HangarError('route_not_found', [request.method, request.url], { cause: err });
  }
  if (typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500) {
    return new HangarError('invalid_field', [err.message], { cause: err });
  }
  return new HangarError('internal_error', [String(request.id)], { cause: err });
}

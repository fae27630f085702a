import type { FastifyInstance, FastifyRequest } from 'fastify';
import sjson from 'secure-json-parse';
import { MAX_JSON_DEPTH, nestedDeeperThan } from '../config/json-nesting.js';
import { jsonSyntaxReason } from '../config/json-syntax.js';
import { HangarError } from '../errors/hangar-error.js';

/** The largest body any route reads, counted after decompression (request-encoding.ts). */
export const BODY_LIMIT_BYTES = 64 * 1024 * 1024;


/**
 * The JSON body parser: fastify's own rules (secure-json-parse drops `__proto__` and
 * `constructor.prototype` poisoning) plus a nesting limit, so hostile nesting is a
 * 400 here instead of a stack overflow in whatever walks the value later.
 */
export function installJsonBody(app: FastifyInstance): void {
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, parseJson);
  // Xinference reads every JSON body with `await request.json()`, whatever its content
  // type: `curl -d '{...}'` without `-H 'Content-Type: application/json'` (curl then
  // says form-urlencoded) works there, and scripts written for it must work here. Not
  // from a browser (a request with an Origin): these two types need no CORS preflight,
  // so a page of any origin could post them past a `--cors-origins` list; a page sends
  // application/json. A form that is not JSON is read as its fields on `POST /token`
  // alone (OAuth2's password flow). docs/decisions.md, "Bodies of other content types".
  app.addContentTypeParser('text/plain', { parseAs: 'buffer' }, (request, body, done) => {
    if (request.headers.origin !== undefined) return done(notJson(request));
    parseJson(request, body, done);
  });
  // Any other type with no body is no body: aiohttp (Xinference's AsyncClient) sends
  // `application/octet-stream` and Content-Length 0 on a POST without data, and its
  // `cancel_launch_model` was a 415. With a body, such a type is still refused, unread.
  app.addContentTypeParser('*', (request, _payload, done) => {
    // No Content-Length and no Transfer-Encoding is no body too (RFC 9112, 6.3).
    const length = request.headers['content-length'];
    if (length === '0' || (length === undefined && request.headers['transfer-encoding'] === undefined)) return done(null, undefined);
    done(new HangarError('unsupported_media_type', [String(request.headers['content-type'] ?? 'none')]));
  });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer' }, (request, body, done) => {
    const login = request.routeOptions.url === '/token';
    if (!login && request.headers.origin !== undefined) return done(notJson(request));
    // JSON sent `curl -d` style is JSON, UTF-8 checked as any (parseJson); a form's fields are read as before.
    const text = (body as Buffer).toString('utf8');
    if (/^\s*[[{]/.test(text)) return parseJson(request, body, done);
    if (login) return done(null, formFields(text));
    done(notJson(request));
  });
}

function notJson(request: FastifyRequest): HangarError {
  return new HangarError('unsupported_media_type', [`${String(request.headers['content-type'])}; send JSON as application/json`]);
}

/** A URL-encoded form's fields; a field given more than once keeps every value, in order. */
function formFields(text: string): Record<string, string | string[]> {
  const fields: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>;
  for (const [name, value] of new URLSearchParams(text)) {
    const previous = fields[name];
    fields[name] = previous === undefined ? value : [...(Array.isArray(previous) ? previous : [previous]), value];
  }
  return { ...fields };
}

/**
 * JSON is UTF-8 (RFC 8259): bytes that are not are refused, where a lenient decoding
 * turned them into U+FFFD and a prompt reached the model changed, with no word said.
 */
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

function parseJson(request: FastifyRequest, body: string | Buffer, done: (err: Error | null, body?: unknown) => void): void {
  let text: string;
  try {
    text = typeof body === 'string' ? body : UTF8.decode(body);
  } catch {
    return done(new HangarError('invalid_json', ['the body is not valid UTF-8, the encoding JSON is sent in']));
  }
  if (text.length === 0) {
    // OpenAI's SDKs send the JSON content type with no body on routes that take none
    // (DELETE, `client.post("/models/x/cancel")`, `responses.cancel`): no body, not a
    // malformed one. A route that needs a body then says which field is missing, and
    // an unknown path stays a 404.
    return done(null, undefined);
  }
  let value: unknown;
  try {
    value = sjson.parse(text, undefined, { protoAction: 'remove', constructorAction: 'remove' });
  } catch (err) {
    return done(new HangarError('invalid_json', [jsonSyntaxReason(err)]));
  }
  if (nestedDeeperThan(value, MAX_JSON_DEPTH)) {
    return done(new HangarError('invalid_json', [`the body is nested deeper than ${MAX_JSON_DEPTH} levels`]));
  }
  done(null, value);
}

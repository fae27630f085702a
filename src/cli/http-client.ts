import { CliError } from './cli-error.js';
import type { Connection } from './connection.js';
import { readSseData } from './sse-reader.js';

/**
 * The CLI's only way to the server: JSON over HTTP (the cli-is-a-client rule of
 * .dependency-cruiser.cjs). Every failure becomes a CliError whose one line says what
 * to do about it.
 */
export class HttpClient {
  constructor(readonly connection: Connection) {}

  get<T>(path: string, signal?: AbortSignal): Promise<T> {
    return this.json<T>('GET', path, undefined, signal);
  }

  post<T>(path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    return this.json<T>('POST', path, body ?? {}, signal);
  }

  put<T>(path: string, body: unknown): Promise<T> {
    return this.json<T>('PUT', path, body);
  }

  delete<T>(path: string): Promise<T> {
    return this.json<T>('DELETE', path);
  }

  /** POSTs and yields each `data:` payload of the SSE answer, parsed, until `[DONE]`. */
  async *stream(path: string, body: unknown, signal?: AbortSignal): AsyncGenerator<Record<string, unknown>> {
    const res = await this.send('POST', path, body, signal);
    if (!res.ok) throw await failure(res, this.connection.endpoint);
    if (!res.body) throw new CliError('the server answered the stream with no body');
    try {
      for await (const data of readSseData(res.body)) {
        if (data === '[DONE]') return;
        const chunk = parseJson(data, 'an event of the stream') as Record<string, unknown>;
        if (chunk !== null && typeof chunk === 'object' && chunk.error !== undefined) throw new CliError(`the server stopped the stream: ${clip(errorText(chunk.error))}`);
        yield chunk;
      }
    } catch (err) {
      if (err instanceof CliError) throw err;
      // undici's "terminated": the connection closed in the middle of the answer.
      throw new CliError(`the stream broke off: ${networkReason(err)}; the answer is cut short`, null, 1, err);
    }
    throw new CliError('the stream ended before its [DONE]: the answer may be cut short');
  }

  private async json<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    const res = await this.send(method, path, body, signal);
    const text = await boundedText(res, `the answer to ${method} ${path}`);
    if (!res.ok) throw failureFrom(res, text, this.connection.endpoint);
    return (text.length > 0 ? parseJson(text, `the answer to ${method} ${path} (${res.headers.get('content-type') ?? 'no content type'})`) : null) as T;
  }

  /** `signal`: the caller's Ctrl-C; the request (and a stream's reading) ends with it. */
  private async send(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<Response> {
    const { endpoint, credential } = this.connection;
    const headers: Record<string, string> = { accept: 'application/json' };
    if (credential) headers.authorization = `Bearer ${credential}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const url = URL.canParse(endpoint + path) ? new URL(endpoint + path) : null;
    // `localhost:9997` parses as a URL of the scheme "localhost:": the same mistake as `127.0.0.1:9997`.
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      throw new CliError(`the endpoint ${endpoint} is not an http:// or https:// URL; pass one like http://127.0.0.1:9997 with -e/--endpoint or HANGAR_ENDPOINT`);
    }
    // Redirects are followed by hand, and only within the endpoint's origin: fetch would
    // send a 307/308's body (a login's password, a launch's `envs`) to wherever the
    // Location says, and a 303 would turn a DELETE into a GET that "succeeds".
    let target = url;
    let sending: { method: string; body?: string } = { method, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) };
    for (let hop = 0; ; hop++) {
      let res: Response;
      try {
        res = await fetch(target, { ...sending, headers: sending.body === undefined ? withoutContentType(headers) : headers, redirect: 'manual', ...(signal ? { signal } : {}) });
      } catch (err) {
        if (signal?.aborted) throw err;
        throw new CliError(`cannot reach the Hangar server at ${endpoint} (${networkReason(err)}); is it running? Choose another with -e/--endpoint or HANGAR_ENDPOINT`, null, 1, err);
      }
      const location = REDIRECTS.has(res.status) ? res.headers.get('location') : null;
      if (location === null) return res;
      await res.body?.cancel();
      const next = URL.canParse(location, target.href) ? new URL(location, target) : null;
      if (!next || next.origin !== url.origin) {
        throw new CliError(`${endpoint} redirected ${method} ${path} to ${next?.origin ?? JSON.stringify(location.slice(0, 120))}, another server; nothing was sent there. If that is the Hangar server, pass it with -e/--endpoint`, res.status);
      }
      if (hop >= MAX_REDIRECTS) throw new CliError(`${endpoint} redirected ${method} ${path} more than ${MAX_REDIRECTS} times`, res.status);
      // As fetch does: 303 (and 301/302 of a POST) go on as a GET without the body.
      if (res.status === 303 || ((res.status === 301 || res.status === 302) && sending.method === 'POST')) sending = { method: 'GET' };
      target = next;
    }
  }
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 5;
/** The most of an answer the CLI reads: Hangar's largest (a long model list) is a few MiB. */
export const ANSWER_LIMIT_BYTES = 64 * 1024 * 1024;
/** The most of an error answer's message printed. */
const DETAIL_LIMIT = 500;

function withoutContentType(headers: Record<string, string>): Record<string, string> {
  const { 'content-type': _dropped, ...rest } = headers;
  return rest;
}

/** The answer's text, read up to ANSWER_LIMIT_BYTES: past it the CLI stops reading rather than hold it all. */
async function boundedText(res: Response, what: string): Promise<string> {
  if (!res.body) return '';
  const decoder = new TextDecoder();
  let text = '';
  let size = 0;
  try {
    for await (const bytes of res.body) {
      size += bytes.byteLength;
      if (size > ANSWER_LIMIT_BYTES) {
        await res.body.cancel().catch(() => {});
        throw new CliError(`${what} is over ${ANSWER_LIMIT_BYTES / 1024 / 1024} MiB (HTTP ${res.status}); is -e/--endpoint a Hangar server?`, res.ok ? null : res.status);
      }
      text += decoder.decode(bytes, { stream: true });
    }
  } catch (err) {
    if (err instanceof CliError) throw err;
    // undici's TypeError "terminated": the connection closed in the middle of the answer.
    throw new CliError(`${what} broke off: ${networkReason(err)}`, res.ok ? null : res.status, 1, err);
  }
  return text + decoder.decode();
}

/** JSON from the server; anything else (a proxy's HTML page) is a CliError quoting what came. */
function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new CliError(`${what} is not JSON: ${JSON.stringify(text.slice(0, 120))}; is -e/--endpoint a Hangar server?`);
  }
}

async function failure(res: Response, endpoint: string): Promise<CliError> {
  return failureFrom(res, await boundedText(res, 'the error answer'), endpoint);
}

/** Maps an error answer (contract §1 shape: `detail` plus OpenAI's `error`) to one actionable line. */
function failureFrom(res: Response, text: string, endpoint: string): CliError {
  let detail = describeText(text, res);
  try {
    const body = JSON.parse(text) as { detail?: unknown; error?: unknown };
    if (body?.detail !== undefined) detail = errorText(body.detail);
    else if (body?.error !== undefined) detail = errorText(body.error);
  } catch {
    // not JSON: described above
  }
  detail = clip(detail.replace(/\s*\r?\n\s*/g, ' ').trim() || res.statusText || 'no message');
  if (res.status === 401) {
    return new CliError(`not authenticated at ${endpoint} (${detail}): log in with \`hangar login\` or pass --api-key`, 401);
  }
  if (res.status === 403) {
    // The guard names the missing permission in the challenge: Bearer scope="models:start".
    const scope = /scope="([^"]+)"/.exec(res.headers.get('www-authenticate') ?? '')?.[1];
    const needs = scope ? `this needs the \`${scope}\` permission, which your credential lacks` : 'your credential lacks the permission this needs';
    return new CliError(`permission denied at ${endpoint}: ${needs} (${detail})`, 403);
  }
  return new CliError(`${detail} (HTTP ${res.status})`, res.status);
}

function errorText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && typeof (value as { message?: unknown }).message === 'string') return (value as { message: string }).message;
  return JSON.stringify(value);
}

/**
 * A body that is not JSON, in words: a proxy's HTML error page by its title (nginx's
 * `<title>502 Bad Gateway</title>`), else its text; its status is said after it anyway.
 */
function describeText(text: string, res: Response): string {
  const trimmed = text.trim();
  if (/html/i.test(res.headers.get('content-type') ?? '') || /^<(!doctype|html)/i.test(trimmed)) {
    const title = /<title[^>]*>([^<]*)<\/title>/i.exec(trimmed)?.[1]?.trim();
    return `an HTML page${title ? ` titled "${clip(title)}"` : ''} (a proxy's error page? is -e/--endpoint the Hangar server?)`;
  }
  return trimmed;
}

function clip(text: string): string {
  return text.length > DETAIL_LIMIT ? `${text.slice(0, DETAIL_LIMIT)}… (${text.length} characters)` : text;
}

/** undici's reason for a failed or broken connection: its cause's code (ECONNREFUSED) or message, else its own ("terminated"). */
function networkReason(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err as Error).message;
}

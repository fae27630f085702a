import { catalog, type ErrorCode, type ErrorType } from './catalog.js';
import { clipText, ECHO_LIMIT, MESSAGE_LIMIT } from './clipped-text.js';

export interface HangarErrorOptions {
  /** The request field the error is about (OpenAI's `param`). */
  param?: string | null;
  /** Extra response headers, e.g. `Retry-After`. */
  headers?: Record<string, string>;
  cause?: unknown;
}

/**
 * An expected failure, carried as a value up to the HTTP edge where it is turned
 * into the contract's error body once (see api/error-handler.ts).
 */
export class HangarError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly type: ErrorType;
  readonly param: string | null;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, args: ReadonlyArray<string | number> = [], options: HangarErrorOptions = {}) {
    super(formatMessage(catalog[code].message, args), { cause: options.cause });
    this.name = 'HangarError';
    this.code = code;
    this.status = catalog[code].status;
    this.type = catalog[code].type;
    this.param = options.param ?? null;
    this.headers = options.headers ?? {};
  }

  /** The same error about another field: a route that maps its request onto another's names its own fields. */
  withParam(param: string, message: string = this.message): HangarError {
    const copy = new HangarError(this.code, [], { param, headers: this.headers, cause: this.cause });
    copy.message = message;
    return copy;
  }
}

/** The catalog's text with its arguments, each clipped (clipped-text.ts): an argument may carry the input. */
export function formatMessage(template: string, args: ReadonlyArray<string | number>): string {
  let i = 0;
  const text = template.replace(/%s/g, () => (i < args.length ? clipText(String(args[i++]), ECHO_LIMIT) : '%s'));
  return clipText(text, MESSAGE_LIMIT);
}

/** The contract's error body: `detail` for Xinference clients, `error` for OpenAI SDKs. */
export interface ErrorBody {
  detail: string;
  error: { message: string; type: ErrorType; param: string | null; code: ErrorCode };
}

export function errorBody(err: HangarError): ErrorBody {
  return {
    detail: err.message,
    error: { message: err.message, type: err.type, param: err.param, code: err.code },
  };
}

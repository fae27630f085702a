import { err as writeErr } from './terminal.js';

/**
 * A failure a person can act on: one line on stderr, a non-zero exit, and the stack
 * only with --debug (issue 8). Every client command ends through `reportFailure`.
 */
export class CliError extends Error {
  constructor(
    message: string,
    /** The HTTP status behind it, when the server answered. */
    readonly status: number | null = null,
    readonly exitCode = 1,
    /** The underlying failure (e.g. the socket error), shown with --debug. */
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'CliError';
  }
}

/** Prints the failure and sets the exit code; anything that is not a CliError is a bug worth its stack with --debug. */
export function reportFailure(err: unknown, debug: boolean): void {
  const message = err instanceof Error ? err.message : String(err);
  writeErr(`hangar: ${oneLine(err instanceof TypeError ? wrongShape(message) : message)}\n`);
  if (debug && err instanceof Error) {
    writeErr(`${err.stack ?? err.message}\n`);
    if (err.cause instanceof Error) writeErr(`Caused by: ${err.cause.stack ?? err.cause.message}\n`);
  }
  process.exitCode = err instanceof CliError ? err.exitCode : 1;
}

/**
 * A TypeError here is JavaScript failing on an answer of another shape than Hangar's API
 * gives (`items is not iterable`, `Cannot read properties of null`): a server of
 * another kind or version behind the endpoint. Said so, with JavaScript's words after.
 */
function wrongShape(message: string): string {
  return `the server's answer is not of the shape Hangar's API gives (${message}); is -e/--endpoint a Hangar server of this version? --debug shows where`;
}

/** The first line, then ` …` when more lines followed. */
function oneLine(message: string): string {
  const lines = message.split(/\r?\n/);
  return lines.length > 1 ? `${lines[0]} …` : message;
}

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
  process.stderr.write(`hangar: ${printable(message.split('\n')[0]!)}\n`);
  if (debug && err instanceof Error) {
    process.stderr.write(`${err.stack ?? err.message}\n`);
    if (err.cause instanceof Error) process.stderr.write(`Caused by: ${err.cause.stack ?? err.cause.message}\n`);
  }
  process.exitCode = err instanceof CliError ? err.exitCode : 1;
}

/**
 * Text from a server (its error messages echo what was sent) as a terminal shows it
 * plainly: control characters (an ESC sequence could move the cursor, retitle the
 * window or hide text) are written as `\u001b`.
 */
export function printable(text: string): string {
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

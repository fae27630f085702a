import { InvalidArgumentError, type Command } from 'commander';
import { reportFailure } from './cli-error.js';
import { resolveConnection, type ConnectionOptions } from './connection.js';
import { HttpClient } from './http-client.js';
import { out } from './terminal.js';

/** `-e/--endpoint`, `-ak/--api-key` (see short-flags.ts) and `--debug`, as every client command has them. */
export function withConnectionOptions(command: Command): Command {
  return command
    .option('-e, --endpoint <url>', 'server address (env HANGAR_ENDPOINT, default http://127.0.0.1:9997)')
    .option('--api-key <key>', 'API key or token, also -ak (env HANGAR_API_KEY, else the token saved by `hangar login`)')
    .option('--debug', 'print the stack trace of a failure');
}

/**
 * Wraps a command's work: resolves the connection, runs it, and turns any failure into
 * one line and a non-zero exit (cli-error.ts).
 */
export function clientAction<O extends ConnectionOptions>(work: (http: HttpClient, options: O, command: Command) => Promise<void>) {
  return async (options: O, command: Command): Promise<void> => {
    try {
      const http = new HttpClient(await resolveConnection(options));
      await work(http, options, command);
    } catch (err) {
      reportFailure(err, options.debug === true);
    }
  };
}

/** Prints a value as JSON for `--json` (machine-readable, one document). */
export function printJson(value: unknown): void {
  out(`${JSON.stringify(value, null, 2)}\n`);
}

/** clientAction for a command with one positional argument (commander passes it first). */
export function clientActionWithArgument<A, O extends ConnectionOptions>(work: (http: HttpClient, argument: A, options: O) => Promise<void>) {
  return (argument: A, options: O, command: Command): Promise<void> => clientAction<O>((http, o) => work(http, argument, o))(options, command);
}

/**
 * A uid or name flag's value: an empty one (`-u ''`, an unset shell variable) would
 * name no model and reach the server as another route (`DELETE /v1/models/`), so it is
 * refused here, naming the flag; so are `.` and `..`.
 */
export function nonEmpty(value: string): string {
  if (value.trim() === '') throw new InvalidArgumentError('must not be empty.');
  // A URL's path drops `.` and `..` segments (even as %2E), so `-u ..` would reach another route too.
  if (value === '.' || value === '..') throw new InvalidArgumentError('must not be "." or "..".');
  return value;
}

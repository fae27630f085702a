import { Command } from 'commander';
import { CliError } from '../cli-error.js';
import { clientAction, withConnectionOptions } from '../command-options.js';
import type { ConnectionOptions } from '../connection.js';
import { HttpClient } from '../http-client.js';
import { saveToken } from '../token-store.js';
import { out } from '../terminal.js';
import { passwordOf } from '../password-input.js';

/** `hangar login --username u --password p` (or `--password-stdin`): gets a token and saves it for this endpoint (token-store.ts). */
export function loginCommand(): Command {
  return withConnectionOptions(
    new Command('login')
      .description('log in and save the token for later commands against this endpoint')
      .requiredOption('--username <name>', 'user name')
      .option('--password <password>', 'password (shows in `ps` and shell history: --password-stdin does not)')
      .option('--password-stdin', 'read the password from the first line of stdin'),
  ).action(
    clientAction<ConnectionOptions & { username: string; password?: string; passwordStdin?: boolean }>(async (http, options) => {
      const password = await passwordOf(options);
      const { endpoint } = http.connection;
      // Logging in never sends an old credential.
      const anonymous = new HttpClient({ endpoint, credential: null });
      const { auth } = await anonymous.get<{ auth: unknown }>('/v1/cluster/auth');
      if (auth === false) throw new CliError(`the server at ${endpoint} does not use authentication; no login is needed`);
      if (auth !== true) throw new CliError(`the server at ${endpoint} did not say whether it uses authentication (auth: ${JSON.stringify(auth)}); is it a Hangar server?`);
      let token: unknown;
      try {
        ({ access_token: token } = await anonymous.post<{ access_token: unknown }>('/token', { username: options.username, password }));
      } catch (err) {
        if (err instanceof CliError && err.status === 401) throw new CliError(`login to ${endpoint} failed: incorrect username or password`, 401);
        throw err;
      }
      // As Xinference's client asserts: no token, no login (and nothing saved).
      if (typeof token !== 'string' || token.length === 0) throw new CliError(`login to ${endpoint} failed: the server answered no access_token; nothing was saved`);
      const file = await saveToken(endpoint, token);
      out(`Logged in to ${endpoint} as ${options.username}; the token is saved in ${file}.\n`);
    }),
  );
}

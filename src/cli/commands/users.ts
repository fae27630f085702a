import { Command } from 'commander';
import { CliError } from '../cli-error.js';
import { clientAction, clientActionWithArgument, printJson, withConnectionOptions } from '../command-options.js';
import type { ConnectionOptions } from '../connection.js';
import { formatTable } from '../table.js';
import { positiveInteger } from './keys.js';
import { out } from '../terminal.js';
import { passwordOf } from '../password-input.js';

const list = (value: string): string[] => value.split(',').map((s) => s.trim()).filter((s) => s.length > 0);


/** `hangar users create|list|update|passwd|delete` (needs users:manage). */
export function usersCommand(): Command {
  const users = new Command('users').description('manage the users kept in the server\'s database');

  users.addCommand(
    withConnectionOptions(
      new Command('create')
        .description('create a user (the first one, on a server without auth, must have admin and turns auth on)')
        .argument('<username>')
        .option('--password <password>', 'at least 8 characters')
        .option('--password-stdin', 'read the password from stdin')
        .option('--permissions <list>', 'comma-separated permissions, e.g. models:list,models:read,keys:create', list, [] as string[])
        .option('--json', 'print the answer as JSON'),
    ).action(
      clientActionWithArgument<string, ConnectionOptions & { password?: string; passwordStdin?: boolean; permissions: string[]; json?: boolean }>(async (http, username, o) => {
        const created = await http.post<{ id: number; username: string }>('/v1/admin/users', { username, password: await passwordOf(o), permissions: o.permissions });
        if (o.json) return printJson(created);
        out(`Created user ${created.username} (id ${created.id}).\n`);
      }),
    ),
  );

  users.addCommand(
    withConnectionOptions(new Command('list').description('list users').option('--json', 'print the list as JSON')).action(
      clientAction<ConnectionOptions & { json?: boolean }>(async (http, o) => {
        const rows = await http.get<Array<Record<string, unknown>>>('/v1/admin/users');
        if (o.json) return printJson(rows);
        out(`${formatTable(['ID', 'Username', 'Source', 'Enabled', 'Permissions'], rows.map((u) => [u.id ?? '-', u.username, u.source, u.enabled ? 'yes' : 'no', u.permissions]))}\n`);
      }),
    ),
  );

  users.addCommand(
    withConnectionOptions(
      new Command('update')
        .description("change a user's permissions, or disable or enable them")
        .argument('<id>', 'user id', positiveInteger)
        .option('--permissions <list>', 'comma-separated permissions (replaces the current ones)', list)
        .option('--disable', 'refuse their logins, tokens and keys')
        .option('--enable', 'undo --disable'),
    ).action(
      clientActionWithArgument<number, ConnectionOptions & { permissions?: string[]; disable?: boolean; enable?: boolean }>(async (http, id, o) => {
        if (o.disable && o.enable) throw new CliError('--disable and --enable contradict each other');
        const body: Record<string, unknown> = {};
        if (o.permissions) body.permissions = o.permissions;
        if (o.disable) body.enabled = false;
        if (o.enable) body.enabled = true;
        if (Object.keys(body).length === 0) throw new CliError('nothing to change: give --permissions, --disable or --enable');
        await http.put(`/v1/admin/users/${id}`, body);
        out(`Updated user ${id}.\n`);
      }),
    ),
  );

  users.addCommand(
    withConnectionOptions(
      new Command('passwd').description("set a user's password").argument('<id>', 'user id', positiveInteger).option('--password <password>', 'at least 8 characters').option('--password-stdin', 'read the password from stdin'),
    ).action(
      clientActionWithArgument<number, ConnectionOptions & { password?: string; passwordStdin?: boolean }>(async (http, id, o) => {
        await http.put(`/v1/admin/users/${id}/password`, { new_password: await passwordOf(o) });
        out(`Password of user ${id} changed.\n`);
      }),
    ),
  );

  users.addCommand(
    withConnectionOptions(new Command('delete').description('delete a user and revoke all their keys').argument('<id>', 'user id', positiveInteger)).action(
      clientActionWithArgument<number, ConnectionOptions>(async (http, id) => {
        await http.delete(`/v1/admin/users/${id}`);
        out(`Deleted user ${id} and their keys.\n`);
      }),
    ),
  );
  return users;
}

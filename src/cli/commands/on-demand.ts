import { Command } from 'commander';
import { clientAction, clientActionWithArgument, nonEmpty, printJson, withConnectionOptions } from '../command-options.js';
import type { ConnectionOptions } from '../connection.js';
import { formatTable } from '../table.js';
import { launchBody, launchFlags, type LaunchOptions } from './launch.js';
import { out } from '../terminal.js';

/**
 * `hangar on-demand add|list|remove` (docs/on-demand.md): the models a request loads
 * by naming them, when the server runs with --on-demand. `add` takes `launch`'s flags.
 */
export function onDemandCommand(): Command {
  const command = new Command('on-demand').description('models loaded when a request names them (the server needs --on-demand)');
  command.addCommand(
    withConnectionOptions(launchFlags(new Command('add').description('add (or replace) an on-demand model: the flags of `hangar launch`'))).action(
      clientAction<LaunchOptions>(async (http, options, sub) => {
        const { model_uid: uid } = await http.post<{ model_uid: string }>('/v1/on_demand/models', launchBody(options, sub.args));
        out(`On-demand model: ${uid}\n`);
      }),
    ),
  );
  command.addCommand(
    withConnectionOptions(new Command('list').description('list the on-demand models').option('--json', 'print the list as JSON')).action(
      clientAction<ConnectionOptions & { json?: boolean }>(async (http, options) => {
        const answer = await http.get<{ enabled: boolean; list: Array<Record<string, unknown>> }>('/v1/on_demand/models');
        if (options.json) return printJson(answer);
        if (!answer.enabled) out('On-demand loading is off on this server (start it with --on-demand).\n');
        if (answer.list.length === 0) return void out('No on-demand models.\n');
        const rows = answer.list.map((e) => [e.model_uid, e.model_type, e.model_name, e.model_engine, e.keep_alive, e.status]);
        out(`${formatTable(['UID', 'Type', 'Name', 'Engine', 'Keep alive', 'Status'], rows)}\n`);
      }),
    ),
  );
  command.addCommand(
    withConnectionOptions(new Command('remove').description('remove an on-demand model (a loaded one keeps running until it is idle or terminated)').argument('<model_uid>', 'uid of the on-demand model', nonEmpty)).action(
      clientActionWithArgument<string, ConnectionOptions>(async (http, uid) => {
        await http.delete(`/v1/on_demand/models/${encodeURIComponent(uid)}`);
        out(`Removed on-demand model ${uid}\n`);
      }),
    ),
  );
  return command;
}

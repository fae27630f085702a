import { Command } from 'commander';
import { clientAction, nonEmpty, withConnectionOptions } from '../command-options.js';
import type { ConnectionOptions } from '../connection.js';
import { out } from '../terminal.js';

/** `hangar terminate --model-uid <uid>`: stops every replica of a running (or launching) model. */
export function terminateCommand(): Command {
  return withConnectionOptions(
    new Command('terminate').description('stop a running model').requiredOption('-u, --model-uid <uid>', 'uid of the model to stop', nonEmpty),
  ).action(
    clientAction<ConnectionOptions & { modelUid: string }>(async (http, options) => {
      await http.delete(`/v1/models/${encodeURIComponent(options.modelUid)}`);
      out(`Model ${options.modelUid} terminated.\n`);
    }),
  );
}

import { Command } from 'commander';
import { clientAction, nonEmpty, withConnectionOptions } from '../command-options.js';
import type { ConnectionOptions } from '../connection.js';
import { out } from '../terminal.js';

/** `hangar unregister -t <type> -n <name>`: removes a custom registration. */
export function unregisterCommand(): Command {
  return withConnectionOptions(
    new Command('unregister')
      .description('remove a custom model registration')
      .option('-t, --model-type <type>', 'LLM, embedding, rerank, image, audio, video or flexible', nonEmpty, 'LLM')
      .requiredOption('-n, --model-name <name>', 'the custom model to remove', nonEmpty),
  ).action(
    clientAction<ConnectionOptions & { modelType: string; modelName: string }>(async (http, options) => {
      await http.delete(`/v1/model_registrations/${encodeURIComponent(options.modelType)}/${encodeURIComponent(options.modelName)}`);
      out(`Unregistered ${options.modelName} (${options.modelType}).\n`);
    }),
  );
}

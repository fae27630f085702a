import { Command } from 'commander';
import { clientAction, printJson, withConnectionOptions } from '../command-options.js';
import type { ConnectionOptions } from '../connection.js';
import { out } from '../terminal.js';

/** `hangar vllm-models` (Xinference's): the built-in LLM families the vLLM engine serves, chat and generate. */
export function vllmModelsCommand(): Command {
  return withConnectionOptions(
    new Command('vllm-models').description('list the model families the vLLM engine serves').option('--json', 'print the server\'s answer as JSON'),
  ).action(
    clientAction<ConnectionOptions & { json?: boolean }>(async (http, o) => {
      const families = await http.get<{ chat: string[]; generate: string[] }>('/v1/models/vllm-supported');
      if (o.json) return printJson(families);
      out('vLLM supported model families:\n');
      out(`vLLM supported chat model families: ${families.chat.join(', ')}\n`);
      out(`vLLM supported generate model families: ${families.generate.join(', ')}\n`);
    }),
  );
}

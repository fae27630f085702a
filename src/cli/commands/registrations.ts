import { Command } from 'commander';
import { clientAction, nonEmpty, printJson, withConnectionOptions } from '../command-options.js';
import type { ConnectionOptions } from '../connection.js';
import { formatTable } from '../table.js';
import { out } from '../terminal.js';

type Item = Record<string, unknown>;

const COLUMNS: Record<string, Array<[string, (item: Item) => unknown]>> = {
  LLM: [['Type', () => 'LLM'], ['Name', (i) => i.model_name], ['Language', (i) => i.model_lang], ['Ability', (i) => i.model_ability], ['Is-built-in', (i) => i.is_builtin]],
  embedding: [['Type', () => 'embedding'], ['Name', (i) => i.model_name], ['Language', (i) => i.language], ['Dimensions', (i) => i.dimensions], ['Is-built-in', (i) => i.is_builtin]],
  rerank: [['Type', () => 'rerank'], ['Name', (i) => i.model_name], ['Language', (i) => i.language], ['Is-built-in', (i) => i.is_builtin]],
  flexible: [['Type', () => 'flexible'], ['Name', (i) => i.model_name], ['Launcher', (i) => i.launcher], ['Is-built-in', (i) => i.is_builtin]],
};

/** `hangar registrations -t <type>`: launchable models of a type, built-in and custom. */
export function registrationsCommand(): Command {
  return withConnectionOptions(
    new Command('registrations')
      .description('list the models of a type that can be launched')
      .option('-t, --model-type <type>', 'LLM, embedding, rerank, image, audio, video or flexible', nonEmpty, 'LLM')
      .option('--json', 'print the list as JSON'),
  ).action(
    clientAction<ConnectionOptions & { modelType: string; json?: boolean }>(async (http, options) => {
      const type = options.modelType;
      const items = await http.get<Item[]>(`/v1/model_registrations/${encodeURIComponent(type)}?detailed=true`);
      if (options.json) return printJson(items);
      const columns = COLUMNS[type] ?? [['Type', () => type], ['Name', (i: Item) => i.model_name], ['Family', (i: Item) => i.model_family], ['Ability', (i: Item) => i.model_ability], ['Is-built-in', (i: Item) => i.is_builtin]];
      out(`${formatTable(columns.map(([t]) => t), items.map((item) => columns.map(([, get]) => get(item))))}\n`);
    }),
  );
}

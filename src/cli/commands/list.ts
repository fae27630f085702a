import { Command } from 'commander';
import { clientAction, printJson, withConnectionOptions } from '../command-options.js';
import type { ConnectionOptions } from '../connection.js';
import { formatTable } from '../table.js';
import { out } from '../terminal.js';

type Item = Record<string, unknown>;

/** Columns per model type (Xinference's list: LLM shows format/size/quantization, embedding its dimensions). */
const COLUMNS: Record<string, Array<[string, string]>> = {
  LLM: [['UID', 'id'], ['Type', 'model_type'], ['Name', 'model_name'], ['Engine', 'model_engine'], ['Format', 'model_format'], ['Size (in billions)', 'model_size_in_billions'], ['Quantization', 'quantization'], ['Replica', 'replica']],
  embedding: [['UID', 'id'], ['Type', 'model_type'], ['Name', 'model_name'], ['Engine', 'model_engine'], ['Dimensions', 'dimensions'], ['Replica', 'replica']],
};
const DEFAULT_COLUMNS: Array<[string, string]> = [['UID', 'id'], ['Type', 'model_type'], ['Name', 'model_name'], ['Engine', 'model_engine'], ['Ability', 'model_ability'], ['Replica', 'replica']];

/** `hangar list`: running models, one aligned table per model type. */
export function listCommand(): Command {
  return withConnectionOptions(new Command('list').description('list running models').option('--json', 'print the list as JSON')).action(
    clientAction<ConnectionOptions & { json?: boolean }>(async (http, options) => {
      const { data } = await http.get<{ data: Item[] }>('/v1/models');
      if (options.json) return printJson(data);
      // GET /v1/models lists on-demand entries that are not loaded (status UNLOADED), as
      // Xinference's clients expect; they are not running, and looked as if they were.
      const running = data.filter((item) => item.status !== 'UNLOADED');
      const unloaded = data.length - running.length;
      const note = unloaded > 0 ? `${unloaded} on-demand ${unloaded === 1 ? 'entry is' : 'entries are'} not loaded now: \`hangar on-demand list\` lists them.\n` : '';
      if (running.length === 0) {
        out(`No running models.\n${note}`);
        return;
      }
      out(`${tablesByType(running, (type) => COLUMNS[type] ?? DEFAULT_COLUMNS)}\n${note ? `\n${note}` : ''}`);
    }),
  );
}

/** One table per model type, in first-seen order, separated by a blank line. */
export function tablesByType(items: Item[], columnsFor: (type: string) => Array<[string, string]>): string {
  const byType = new Map<string, Item[]>();
  for (const item of items) {
    const type = String(item.model_type ?? 'LLM');
    byType.set(type, [...(byType.get(type) ?? []), item]);
  }
  return [...byType]
    .map(([type, group]) => {
      const columns = columnsFor(type);
      return formatTable(
        columns.map(([title]) => title),
        group.map((item) => columns.map(([, key]) => item[key])),
      );
    })
    .join('\n\n');
}

import { Command } from 'commander';
import { clientAction, nonEmpty, printJson, withConnectionOptions } from '../command-options.js';
import type { ConnectionOptions } from '../connection.js';
import { formatTable } from '../table.js';
import { out } from '../terminal.js';
import { confirm } from '../confirm.js';

type Row = Record<string, unknown>;

const size = (bytes: unknown): string => (typeof bytes === 'number' ? `${(bytes / 2 ** 20).toFixed(1)} MiB` : '');

/** `hangar cached` (Xinference's `xinference cached`): the weights on the server's disk. */
export function cachedCommand(): Command {
  return withConnectionOptions(
    new Command('cached')
      .description("list the model weights in the server's cache")
      .option('-n, --model-name <name>', 'only this model')
      .option('--json', 'print the list as JSON')
      // Xinference's: a cluster's worker. One server holds one cache here, so it filters nothing.
      .option('-w, --worker-ip <ip>', 'the worker whose cache to list (one worker here: accepted, filters nothing)'),
  ).action(
    clientAction<ConnectionOptions & { modelName?: string; json?: boolean }>(async (http, o) => {
      const { list } = await http.get<{ list: Row[] }>(`/v1/cache/models${o.modelName ? `?model_name=${encodeURIComponent(o.modelName)}` : ''}`);
      if (o.json) return printJson(list);
      if (list.length === 0) return void out('No cached models.\n');
      out(
        `${formatTable(
          ['Name', 'Type', 'Version', 'Size', 'In use by', 'Path'],
          list.map((r) => [r.model_name, r.model_type ?? '', r.model_version, size(r.actual_size), r.in_use_by, r.path]),
        )}\n`,
      );
    }),
  );
}

/** `hangar remove-cache --model-version <v>` (Xinference's `xinference remove-cache`): shows the files, asks, deletes. */
export function removeCacheCommand(): Command {
  return withConnectionOptions(
    new Command('remove-cache')
      .description("delete one model's weights from the server's cache (refused while a running model uses them)")
      .requiredOption('-n, --model-version <version>', 'the Version column of `hangar cached`, e.g. huggingface:BAAI/bge-small-en-v1.5 (also --model_version)', nonEmpty)
      .option('-y, --yes', 'delete without asking')
      .option('--check', "delete without asking (Xinference's spelling of --yes)")
      .option('--worker-ip <ip>', 'the worker whose cache it is (one worker here)'),
  ).action(
    clientAction<ConnectionOptions & { modelVersion: string; yes?: boolean; check?: boolean }>(async (http, o) => {
      const version = encodeURIComponent(o.modelVersion);
      const { paths } = await http.get<{ paths: string[] }>(`/v1/cache/models/files?model_version=${version}`);
      if (!o.yes && !o.check) {
        out(`${paths.join('\n')}\n`);
        if (!(await confirm(`Delete these ${paths.length} file(s)?`))) return void out('Nothing deleted.\n');
      }
      await http.delete(`/v1/cache/models?model_version=${version}`);
      out(`Deleted ${o.modelVersion} (${paths.length} file(s)).\n`);
    }),
  );
}

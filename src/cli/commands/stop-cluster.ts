import { Command } from 'commander';
import { clientAction, withConnectionOptions } from '../command-options.js';
import type { ConnectionOptions } from '../connection.js';
import { confirm } from '../confirm.js';
import { out } from '../terminal.js';

/**
 * `hangar stop-cluster -e <url>` (Xinference's): shows the server it would stop and
 * asks, unless `--check`; then `DELETE /v1/clusters` (admin), which drains and stops
 * the server and its models.
 */
export function stopClusterCommand(): Command {
  return withConnectionOptions(
    new Command('stop-cluster')
      .description('stop the server at the endpoint, and every model it runs (admin)')
      .option('--check', 'stop without asking (Xinference\'s flag)'),
  ).action(
    clientAction<ConnectionOptions & { check?: boolean }>(async (http, o) => {
      if (!o.check) {
        out(`This command will stop the Hangar server at ${http.connection.endpoint}.\n`);
        out(`Supervisor information:\n${JSON.stringify(await http.get('/v1/supervisor'), null, 2)}\n`);
        if (!(await confirm('Continue?'))) return void out('Nothing stopped.\n');
      }
      const answer = await http.delete<{ result?: unknown } | null>('/v1/clusters');
      out(`Cluster stopped: ${String(answer?.result ?? false)}\n`);
    }),
  );
}

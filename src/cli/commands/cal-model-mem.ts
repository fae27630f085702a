import { Command } from 'commander';
import { CliError, reportFailure } from '../cli-error.js';

/**
 * Xinference's `cal-model-mem`, which computes a model's memory in the client from its
 * own catalog code. Not offered (docs/cli.md): the server estimates it. A Xinference
 * user typing it learns where the figure is, instead of "unknown command".
 */
export function calModelMemCommand(): Command {
  return new Command('cal-model-mem')
    .description("Xinference's memory calculator: here the server estimates it (hangar engine -n <name> --json)")
    .allowUnknownOption()
    .allowExcessArguments()
    .action(() => {
      reportFailure(new CliError('cal-model-mem is not offered: the server estimates memory. `hangar engine -n <name> --json` shows each engine entry\'s memory_estimate (bytes per replica), and a launch that does not fit is refused before it starts'), false);
    });
}

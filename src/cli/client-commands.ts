import type { Command } from 'commander';
import { chatCommand } from './commands/chat.js';
import { engineCommand } from './commands/engine.js';
import { generateCommand } from './commands/generate.js';
import { launchCommand } from './commands/launch.js';
import { listCommand } from './commands/list.js';
import { loginCommand } from './commands/login.js';
import { registerCommand } from './commands/register.js';
import { registrationsCommand } from './commands/registrations.js';
import { terminateCommand } from './commands/terminate.js';
import { unregisterCommand } from './commands/unregister.js';
import { cachedCommand, removeCacheCommand } from './commands/cache.js';
import { keysCommand, usageCommand } from './commands/keys.js';
import { usersCommand } from './commands/users.js';
import { onDemandCommand } from './commands/on-demand.js';
import { psCommand } from './commands/ps.js';
import { stopClusterCommand } from './commands/stop-cluster.js';
import { vllmModelsCommand } from './commands/vllm-models.js';
import { calModelMemCommand } from './commands/cal-model-mem.js';
import { expandShortFlags } from './short-flags.js';

const commands = [launchCommand, listCommand, terminateCommand, registerCommand, unregisterCommand, registrationsCommand, engineCommand, loginCommand, chatCommand, generateCommand, keysCommand, usersCommand, usageCommand, cachedCommand, removeCacheCommand, psCommand, onDemandCommand, stopClusterCommand, vllmModelsCommand];

/** Adds the client commands (they talk to a server over HTTP) to the `hangar` program. */
export function addClientCommands(program: Command): void {
  for (const make of commands) program.addCommand(make());
  program.addCommand(calModelMemCommand(), { hidden: true });
  // `hangar registrations --json | head`: the reader left, which ends the output, not in
  // a stack trace (an unhandled 'error' on stdout). Other write errors still surface.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(process.exitCode ?? 0);
  });
}

/** argv with Xinference's flag spellings rewritten for commander (short-flags.ts), for the client commands only. */
export function clientArgv(program: Command, argv: string[]): string[] {
  const names = new Set(program.commands.filter((c) => c.name() !== 'start').map((c) => c.name()));
  return expandShortFlags(argv, names);
}

import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { chatCommand } from '../../src/cli/commands/chat.js';
import { launchCommand } from '../../src/cli/commands/launch.js';
import { terminateCommand } from '../../src/cli/commands/terminate.js';
import { unregisterCommand } from '../../src/cli/commands/unregister.js';

/** Parses argv with the command's own parser; what it refused, or null when it would run. */
function refusal(command: Command, args: string[]): string | null {
  let said = '';
  command.exitOverride().configureOutput({ writeErr: (text) => (said += text), writeOut: () => {} });
  // The action is replaced: only the flags' parsing is under test, nothing is sent.
  command.action(() => {});
  try {
    command.parse(['node', command.name(), ...args]);
    return null;
  } catch {
    return said;
  }
}

describe('uid and name flags', () => {
  it('refuse an empty or blank value before anything is sent, naming the flag', () => {
    expect(refusal(terminateCommand(), ['-u', ''])).toContain("option '-u, --model-uid <uid>' argument '' is invalid. must not be empty.");
    expect(refusal(terminateCommand(), ['--model-uid', '   '])).toContain('must not be empty');
    expect(refusal(chatCommand(), ['-u', ''])).toContain('--model-uid');
    expect(refusal(launchCommand(), ['qwen', '-u', '', '--model-engine', 'x'])).toContain('--model-uid');
    expect(refusal(unregisterCommand(), ['-n', '', '-t', 'LLM'])).toContain('--model-name');
    expect(refusal(terminateCommand(), ['-u', 'my-model'])).toBeNull();
  });
});

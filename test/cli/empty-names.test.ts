import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { chatCommand } from '../../src/cli/commands/chat.js';
import { keysCommand } from '../../src/cli/commands/keys.js';
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
    // A URL path drops . and .. segments: DELETE /v1/models/.. would be DELETE /v1/.
    expect(refusal(terminateCommand(), ['-u', '..'])).toContain('must not be "." or ".."');
    expect(refusal(terminateCommand(), ['-u', '.'])).toContain('must not be "." or ".."');
    expect(refusal(unregisterCommand(), ['-n', 'models', '-t', '..'])).toContain('--model-type');
  });
});

describe('keys create --models', () => {
  it('refuses an empty list (the server reads [] as every model), and takes a real one', () => {
    const create = () => keysCommand().commands.find((c) => c.name() === 'create')!;
    for (const value of ['', ',', ' , ']) expect(refusal(create(), ['--name', 'k', '--models', value])).toContain('must name at least one model');
    expect(refusal(create(), ['--name', 'k', '--models', 'a,b'])).toBeNull();
    expect(refusal(create(), ['--name', 'k'])).toBeNull();
  });
});

describe('the endpoint and the credential', () => {
  it('refuses an endpoint with a password, query or fragment, and a key with a line break, without printing them', async () => {
    const { resolveConnection } = await import('../../src/cli/connection.js');
    const refused = async (options: { endpoint?: string; apiKey?: string }) => (await resolveConnection(options, {}).then(() => null, (err: Error) => err.message))!;
    const withPassword = await refused({ endpoint: 'http://user:pw-secret@127.0.0.1:9997' });
    expect(withPassword).toContain('holds a user name or password');
    expect(withPassword).not.toContain('pw-secret');
    expect(await refused({ endpoint: 'http://127.0.0.1:9997?x=1' })).toContain('has a query or fragment');
    expect(await refused({ endpoint: 'http://127.0.0.1:9997/#frag' })).toContain('has a query or fragment');
    const newline = await refused({ endpoint: 'http://127.0.0.1:9997', apiKey: 'sk-SECRET\nX: y' });
    expect(newline).toContain('control character');
    expect(newline).not.toContain('SECRET');
    expect(await resolveConnection({ endpoint: 'http://127.0.0.1:9997/', apiKey: 'sk-ok' }, {})).toEqual({ endpoint: 'http://127.0.0.1:9997', credential: 'sk-ok' });
    // A key read from a file ends in a newline: trimmed, as fetch trims a header value.
    expect((await resolveConnection({ endpoint: 'http://127.0.0.1:9997' }, { HANGAR_API_KEY: 'sk-from-file\n' })).credential).toBe('sk-from-file');
  });
});

describe("Xinference's spellings of the generation flags", () => {
  it('takes --stream with a value (True/False) or alone, and --max-tokens only as a whole number', () => {
    const parsed = (args: string[]) => {
      const command = chatCommand().exitOverride().configureOutput({ writeErr: () => {}, writeOut: () => {} });
      command.action(() => {});
      command.parse(['node', 'chat', '-u', 'm', ...args]);
      return command.opts();
    };
    expect(parsed(['--stream', 'False']).stream).toBe(false);
    expect(parsed(['--stream', 'True']).stream).toBe(true);
    expect(parsed(['--stream']).stream).toBe(true);
    expect(parsed(['--no-stream']).stream).toBe(false);
    expect(parsed([]).stream).toBeUndefined();
    expect(refusal(chatCommand(), ['-u', 'm', '--stream', 'maybe'])).toContain('must be true or false');
    expect(refusal(chatCommand(), ['-u', 'm', '--max-tokens', '1.5'])).toContain('whole number');
    expect(parsed(['--max-tokens', '64']).maxTokens).toBe(64);
  });
});

import { CliError } from './cli-error.js';

/**
 * The password from `--password`, or the first line of stdin with `--password-stdin`:
 * an argument shows in `ps` (every local user reads /proc/<pid>/cmdline) and in shell
 * history; stdin does not.
 */
export async function passwordOf(o: { password?: string; passwordStdin?: boolean }): Promise<string> {
  if (o.passwordStdin) {
    let text = '';
    for await (const chunk of process.stdin) text += String(chunk);
    return text.split(/\r?\n/)[0] ?? '';
  }
  if (o.password === undefined) throw new CliError('give the password with --password or --password-stdin');
  return o.password;
}

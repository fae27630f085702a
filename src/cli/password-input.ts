import { CliError } from './cli-error.js';

/**
 * The password from `--password`, or the first line of stdin with `--password-stdin`:
 * an argument shows in `ps` (every local user reads /proc/<pid>/cmdline) and in shell
 * history; stdin does not.
 */
export async function passwordOf(o: { password?: string; passwordStdin?: boolean }): Promise<string> {
  // Both given: which one was meant is not for the CLI to guess (stdin was read silently).
  if (o.passwordStdin && o.password !== undefined) throw new CliError('give the password with --password or with --password-stdin, not both');
  if (o.passwordStdin) {
    let text = '';
    for await (const chunk of process.stdin) text += String(chunk);
    const password = text.split(/\r?\n/)[0] ?? '';
    // An empty stdin (a pipe that gave nothing) was sent as a login that failed, counted and audited.
    if (password === '') throw new CliError('--password-stdin read no password: the first line of stdin is empty');
    return password;
  }
  if (o.password === undefined) throw new CliError('give the password with --password or --password-stdin');
  return o.password;
}

import { createInterface } from 'node:readline/promises';
import { printable } from './terminal.js';

/**
 * Asks a yes/no question on stdin; only `y` or `yes` is yes (end of input is no). On
 * Node 20 the question's promise never settles when input ends first (`< /dev/null`,
 * or `printf y` with no newline): the process then left with exit code 13 and nothing
 * said, so the end of input answers too, with the last line it brought, if any.
 */
export async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  let unfinished: string | null = null;
  rl.on('line', (line) => {
    unfinished = line;
  });
  const ended = new Promise<null>((resolve) => rl.once('close', () => resolve(null)));
  const answer = (await Promise.race([rl.question(printable(`${question} [y/N] `)).catch(() => ''), ended])) ?? unfinished ?? '';
  rl.close();
  return /^y(es)?$/i.test(answer.trim());
}

import { createInterface } from 'node:readline/promises';
import { printable } from './terminal.js';

/** Asks a yes/no question on stdin; only `y` or `yes` is yes (end of input is no). */
export async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  const answer = await rl.question(printable(`${question} [y/N] `)).catch(() => '');
  rl.close();
  return /^y(es)?$/i.test(answer.trim());
}

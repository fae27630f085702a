import { createInterface } from 'node:readline';
import { out } from './terminal.js';

/**
 * Reads prompts line by line from stdin until EOF, `exit` or `quit`. On a terminal it
 * shows `label` before each line; from a pipe (scripts, tests) it reads silently, so
 * stdout carries only the answers.
 */
export async function forEachPrompt(label: string, handle: (line: string) => Promise<void>): Promise<void> {
  const tty = process.stdin.isTTY === true;
  const rl = createInterface({ input: process.stdin, ...(tty ? { output: process.stdout, terminal: true } : { terminal: false }) });
  const ask = (): void => {
    if (tty) out(label);
  };
  ask();
  try {
    for await (const raw of rl) {
      const line = raw.trim();
      if (line === 'exit' || line === 'quit') break;
      if (line !== '') await handle(line);
      ask();
    }
  } finally {
    rl.close();
  }
}

/** Whether labels such as `Assistant: ` belong in the output (only for a person at a terminal). */
export const interactive = (): boolean => process.stdin.isTTY === true;

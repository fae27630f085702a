import { createInterface } from 'node:readline';
import { out } from './terminal.js';

/**
 * Reads prompts line by line from stdin until EOF, `exit` or `quit`. On a terminal it
 * shows `label` before each line; from a pipe (scripts, tests) it reads silently, so
 * stdout carries only the answers.
 *
 * Ctrl-C at a terminal: readline holds the terminal in raw mode, so ^C reaches it, not
 * the process as SIGINT. During an answer it stops that answer (`handle`'s signal
 * aborts its request, and the server stops generating); at the prompt it ends the
 * session, as Xinference's CLI does. Before, an answer ran on to its end and the
 * session then quit. From a pipe, SIGINT ends the process as usual.
 */
export async function forEachPrompt(label: string, handle: (line: string, signal: AbortSignal) => Promise<void>): Promise<void> {
  const tty = process.stdin.isTTY === true;
  const rl = createInterface({ input: process.stdin, ...(tty ? { output: process.stdout, terminal: true } : { terminal: false }) });
  let answering: AbortController | null = null;
  rl.on('SIGINT', () => {
    if (answering) answering.abort();
    else {
      out('\n');
      rl.close();
    }
  });
  const ask = (): void => {
    if (tty) out(label);
  };
  ask();
  try {
    for await (const raw of rl) {
      const line = raw.trim();
      if (line === 'exit' || line === 'quit') break;
      if (line !== '') {
        answering = new AbortController();
        try {
          await handle(line, answering.signal);
        } catch (err) {
          if (!answering.signal.aborted) throw err;
          out('\n[interrupted]\n');
        } finally {
          answering = null;
        }
      }
      ask();
    }
  } finally {
    rl.close();
  }
}

/** Whether labels such as `Assistant: ` belong in the output (only for a person at a terminal). */
export const interactive = (): boolean => process.stdin.isTTY === true;

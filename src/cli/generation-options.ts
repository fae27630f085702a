import { InvalidArgumentError, type Command } from 'commander';
import { nonEmpty, withConnectionOptions } from './command-options.js';
import type { ConnectionOptions } from './connection.js';

export interface GenerationOptions extends ConnectionOptions {
  modelUid: string;
  maxTokens: number;
  temperature?: number;
  stream?: boolean;
}

const number = (min: number) => (value: string): number => {
  const n = Number(value);
  if (!Number.isFinite(n) || n < min) throw new InvalidArgumentError(`must be a number of at least ${min}.`);
  return n;
};

/** Flags `chat` and `generate` share (Xinference: --model-uid, --max_tokens, --stream). */
export function withGenerationOptions(command: Command): Command {
  return withConnectionOptions(
    command
      .requiredOption('-u, --model-uid <uid>', 'uid of the running model', nonEmpty)
      .option('--max-tokens <n>', 'most tokens per answer, also --max_tokens', number(1), 512)
      .option('--temperature <t>', 'sampling temperature (0: greedy)', number(0))
      .option('--stream', 'print the answer as it is generated (the default)')
      .option('--no-stream', 'print the answer when it is complete'),
  );
}

/** The sampling fields of the request body. */
export function samplingFields(options: GenerationOptions): Record<string, unknown> {
  return { max_tokens: options.maxTokens, ...(options.temperature !== undefined ? { temperature: options.temperature } : {}) };
}

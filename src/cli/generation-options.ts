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
  if (value.trim() === '' || !Number.isFinite(n) || n < min) throw new InvalidArgumentError(`must be a number of at least ${min}.`);
  return n;
};

const wholeNumber = (min: number) => (value: string): number => {
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value)) || Number(value) < min) throw new InvalidArgumentError(`must be a whole number of at least ${min}.`);
  return Number(value);
};

/** Xinference's click reads `--stream True` / `--stream false` (a bool option); a bare --stream is true. */
const streamValue = (value: string): boolean => {
  const lower = value.toLowerCase();
  if (['true', '1', 'yes', 'y', 'on', 't'].includes(lower)) return true;
  if (['false', '0', 'no', 'n', 'off', 'f'].includes(lower)) return false;
  throw new InvalidArgumentError('must be true or false.');
};

/** Flags `chat` and `generate` share (Xinference: --model-uid, --max_tokens, --stream). */
export function withGenerationOptions(command: Command): Command {
  return withConnectionOptions(
    command
      .requiredOption('-u, --model-uid <uid>', 'uid of the running model', nonEmpty)
      .option('--max-tokens <n>', 'most tokens per answer, also --max_tokens', wholeNumber(1), 512)
      .option('--temperature <t>', 'sampling temperature (0: greedy)', number(0))
      .option('--stream [true|false]', 'print the answer as it is generated (the default); also --stream False, as Xinference spells it', streamValue)
      .option('--no-stream', 'print the answer when it is complete'),
  );
}

/** The sampling fields of the request body. */
export function samplingFields(options: GenerationOptions): Record<string, unknown> {
  return { max_tokens: options.maxTokens, ...(options.temperature !== undefined ? { temperature: options.temperature } : {}) };
}

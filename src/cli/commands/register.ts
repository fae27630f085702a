import { Command } from 'commander';
import { readFile } from 'node:fs/promises';
import { CliError } from '../cli-error.js';
import { clientAction, nonEmpty, withConnectionOptions } from '../command-options.js';
import type { ConnectionOptions } from '../connection.js';
import { out } from '../terminal.js';

interface RegisterOptions extends ConnectionOptions {
  modelType: string;
  file: string;
  persist?: boolean;
  workerIp?: string;
}

/** `hangar register -t <type> -f model.json [-p]`: a custom model from a definition file. */
export function registerCommand(): Command {
  return withConnectionOptions(
    new Command('register')
      .description('register a custom model from a JSON definition file')
      .option('-t, --model-type <type>', 'LLM, embedding, rerank, image, audio, video or flexible', nonEmpty, 'LLM')
      .requiredOption('-f, --file <path>', 'the model definition (JSON)')
      .option('-p, --persist', 'keep the registration across server restarts')
      .option('-w, --worker-ip <ip>', 'worker to register on'),
  ).action(
    clientAction<RegisterOptions>(async (http, options) => {
      let text: string;
      try {
        text = await readFile(options.file, 'utf8');
      } catch (err) {
        throw new CliError(`cannot read the model definition ${options.file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
      }
      let definition: { model_name?: unknown };
      try {
        definition = JSON.parse(text) as { model_name?: unknown };
      } catch (err) {
        throw new CliError(`the model definition ${options.file} is not valid JSON: ${(err as Error).message}`);
      }
      // Xinference's shape: the definition travels as a JSON string in `model`.
      const body: Record<string, unknown> = { model: text, persist: options.persist === true };
      if (options.workerIp) body.worker_ip = options.workerIp;
      await http.post(`/v1/model_registrations/${encodeURIComponent(options.modelType)}`, body);
      out(`Registered ${String(definition.model_name)} (${options.modelType})${options.persist ? ', persisted' : ''}.\n`);
    }),
  );
}

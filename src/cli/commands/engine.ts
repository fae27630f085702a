import { Command } from 'commander';
import { CliError } from '../cli-error.js';
import { clientAction, nonEmpty, printJson, withConnectionOptions } from '../command-options.js';
import type { ConnectionOptions } from '../connection.js';
import { formatTable } from '../table.js';
import { out } from '../terminal.js';

interface EngineOptions extends ConnectionOptions {
  modelName: string;
  modelType?: string;
  modelEngine?: string;
  modelFormat?: string;
  modelSizeInBillions?: string;
  quantization?: string;
  json?: boolean;
}

/** An engine table entry; image and audio models have no format, size or quantizations. */
interface EngineSpec {
  model_name: string;
  model_format?: string;
  model_size_in_billions?: number | string | null;
  quantizations?: string[];
}

const TYPES = ['LLM', 'embedding', 'rerank', 'image', 'audio', 'video', 'flexible'];

/** `hangar engine -n <name>`: which engines can run a model here, with what formats, sizes and quantizations. */
export function engineCommand(): Command {
  return withConnectionOptions(
    new Command('engine')
      .description('list the engines that can run a model, and why the others cannot')
      .requiredOption('-n, --model-name <name>', 'registered model name', nonEmpty)
      .option('-t, --model-type <type>', 'model type (default LLM)')
      .option('--model-engine <engine>', 'only this engine, also -en')
      .option('-f, --model-format <format>', 'only this format')
      .option('-s, --model-size-in-billions <size>', 'only this size')
      .option('-q, --quantization <q>', 'only this quantization')
      .option('--json', 'print the engine table as JSON'),
  ).action(
    clientAction<EngineOptions>(async (http, options) => {
      const name = encodeURIComponent(options.modelName);
      const path = options.modelType ? `/v1/engines/${encodeURIComponent(options.modelType)}/${name}` : `/v1/engines/${name}`;
      // The server answers an unknown name with 200 null, as Xinference's does.
      const table = await http.get<Record<string, EngineSpec[] | string> | null>(path);
      if (table === null) {
        // Without -t the name is an LLM's, as in Xinference: say which type it is when it is another's.
        if (!options.modelType) {
          for (const type of TYPES.slice(1)) {
            if ((await http.get<unknown>(`/v1/engines/${type}/${name}`)) !== null) {
              throw new CliError(`"${options.modelName}" is a model of type ${type}, not an LLM: hangar engine -t ${type} -n ${options.modelName}`);
            }
          }
        }
        const type = options.modelType ?? 'LLM';
        throw new CliError(`no ${type} model is registered as "${options.modelName}"; \`hangar registrations -t ${type}\` lists them`);
      }
      const engines = Object.entries(table).filter(([engine]) => !options.modelEngine || engine.toLowerCase() === options.modelEngine.toLowerCase());
      if (options.json) return printJson(Object.fromEntries(engines));
      const rows: unknown[][] = [];
      const unusable: string[] = [];
      for (const [engine, specs] of engines) {
        if (typeof specs === 'string') {
          unusable.push(`${engine}: ${specs}`);
          continue;
        }
        for (const spec of specs) {
          if (options.modelFormat && spec.model_format !== options.modelFormat) continue;
          if (options.modelSizeInBillions && String(spec.model_size_in_billions) !== options.modelSizeInBillions.replace('.', '_')) continue;
          // Image and audio entries have no quantizations (the table read `quantizations` of them and failed).
          for (const q of spec.quantizations ?? ['']) {
            if (options.quantization && q.toLowerCase() !== options.quantization.toLowerCase()) continue;
            rows.push([spec.model_name, engine, spec.model_format ?? '', spec.model_size_in_billions ?? '', q]);
          }
        }
      }
      out(`${formatTable(['Name', 'Engine', 'Format', 'Size (in billions)', 'Quantization'], rows)}\n`);
      if (unusable.length > 0) out(`\nNot usable here:\n${unusable.map((u) => `  ${u}`).join('\n')}\n`);
    }),
  );
}

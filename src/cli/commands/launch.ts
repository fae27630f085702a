import { Command, InvalidArgumentError } from 'commander';
import { CliError } from '../cli-error.js';
import { clientAction, nonEmpty, printJson, withConnectionOptions } from '../command-options.js';
import type { ConnectionOptions } from '../connection.js';
import { engineKwargs, parseValue } from '../engine-kwargs.js';
import { followLaunch } from '../launch-progress.js';
import { out } from '../terminal.js';

export interface LaunchOptions extends ConnectionOptions {
  modelName?: string;
  modelType: string;
  modelEngine?: string;
  modelUid?: string;
  sizeInBillions?: string;
  modelFormat?: string;
  quantization?: string;
  replica: number;
  nGpu: string;
  gpuIdx?: string;
  modelPath?: string;
  env?: string[];
  loraModules?: string[];
  imageLoraLoadKwargs?: string[];
  imageLoraFuseKwargs?: string[];
  quantizationConfig?: string[];
  nWorker?: number;
  enableThinking?: boolean;
  enableVirtualEnv?: boolean;
  disableVirtualEnv?: boolean;
  virtualEnvPackage?: string[];
  virtualEnvFindLink?: string[];
  workerIp?: string;
  keepAlive?: string;
  force?: boolean;
  json?: boolean;
}

const positiveInt = (value: string): number => {
  // Digits only: Number() also reads "0x10", "1e1" and " 2 ".
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError('must be a whole number of 1 or more.');
  return Number(value);
};
const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

/** `hangar launch`: Xinference's flags (notes §10); unknown `--name value` pairs go to the engine. */
export function launchCommand(): Command {
  return withConnectionOptions(
    launchFlags(new Command('launch').description('launch a model (a registered name, or a hub id: hangar launch hf.co/<org>/<repo>[:Q4_K_M]) and follow its progress until it is ready'))
      .option('--json', 'print {"model_uid": ...} as JSON when ready'),
  ).action(
    clientAction<LaunchOptions>(async (http, options, command) => {
      const body = launchBody(options, command.args);
      const { model_uid: uid } = await http.post<{ model_uid: unknown }>('/v1/models?wait_ready=false', body);
      if (typeof uid !== 'string' || uid.length === 0) throw new CliError(`the server accepted the launch but answered no model_uid (${JSON.stringify(uid)}); is -e/--endpoint a Hangar server?`);
      try {
        await followLaunch(http, uid, { quiet: options.json === true });
      } catch (error) {
        // A credential that may start models but not list them (models:start alone): the
        // launch goes on, and a retry would only be a 409. Said so, not "permission denied".
        if (error instanceof CliError && error.status === 403) {
          throw new CliError(`the server accepted the launch of ${uid} and it goes on, but following it was refused (${error.message}); \`hangar list\` with a credential holding models:list shows it, \`hangar terminate -u ${uid}\` stops it`, 403);
        }
        throw error;
      }
      if (options.json) printJson({ model_uid: uid });
      else out(`Model uid: ${uid}\n`);
    }),
  );
}

/** The flags that describe a launch, shared by `launch` and `on-demand add`. */
export function launchFlags(command: Command): Command {
  return command
      .option('-n, --model-name <name>', 'registered model name, or a hub id hf.co/<org>/<repo>[:<quantization>] (also as the first argument)')
      .option('-t, --model-type <type>', 'LLM, embedding, rerank, image, audio, video or flexible', 'LLM')
      .option('--model-engine <engine>', 'engine, also -en (required for LLMs), e.g. Transformers')
      .option('-u, --model-uid <uid>', 'uid for the running model (default: the model name)', nonEmpty)
      .option('-s, --size-in-billions <size>', 'model size, e.g. 7 or 0_5')
      .option('-f, --model-format <format>', 'e.g. pytorch, gptq, ggufv2')
      .option('-q, --quantization <q>', 'e.g. none, Int4, q4_0')
      .option('-r, --replica <n>', 'number of replicas', positiveInt, 1)
      .option('--n-gpu <n>', 'GPUs per replica: auto, a number, or none for CPU', 'auto')
      .option('--gpu-idx <list>', 'pin GPUs, comma separated, e.g. 0,1')
      .option('--model-path <path>', 'launch from a local folder, also -mp')
      .option('--env <name-and-value...>', 'environment variable for the model process, also -ev: --env NAME VALUE (repeatable)')
      .option('--lora-modules <name-and-path...>', 'LoRA adapter to load with the model, also -lm: --lora-modules NAME PATH (repeatable)')
      .option('--image-lora-load-kwargs <name-and-value...>', "an image model's LoRA load argument, also -ld: NAME VALUE (repeatable)")
      .option('--image-lora-fuse-kwargs <name-and-value...>', "an image model's LoRA fuse argument, also -fd: NAME VALUE (repeatable)")
      .option('--quantization-config <name-and-value...>', "Xinference's bitsandbytes settings, also -qc: NAME VALUE (repeatable); sent as it sends them, though no engine here quantizes at load (docs/cli.md)")
      .option('--n-worker <n>', 'workers the model spans (Xinference; one here)', positiveInt)
      .option('--enable-thinking', "the model's chats think unless a request says otherwise (enable_thinking, for models that can switch it: Qwen3 and others)")
      .option('--enable-virtual-env', "Xinference's per-model virtual environment, sent as it sends it (docs/cli.md)")
      .option('--disable-virtual-env', 'the opposite of --enable-virtual-env')
      .option('--virtual-env-package <package>', 'a package for the virtual environment, also -vp (repeatable)', collect)
      .option('--virtual-env-find-link <path>', 'a wheel folder for the virtual environment (repeatable)', collect)
      .option('--worker-ip <ip>', 'worker to place the model on')
      .option('--keep-alive <duration>', 'unload after this long idle: 5m, 30s, 1h, 0 (after each request) or -1 (never, the default)')
      .option('--force', 'launch even when the memory estimate does not fit the memory budget')
      // Unknown options are engine arguments (engine-kwargs.ts), collected from command.args.
      .allowUnknownOption()
      .allowExcessArguments();
}

/** Parameters of Xinference's `launch_model` that flags set, with the flag that sets each. */
const OWN_FIELDS: Record<string, string> = {
  model_name: '-n/--model-name', model_type: '-t/--model-type', model_engine: '-en/--model-engine', model_uid: '-u/--model-uid',
  replica: '-r/--replica', n_gpu: '--n-gpu', model_size_in_billions: '-s/--size-in-billions',
  model_format: '-f/--model-format', quantization: '-q/--quantization', gpu_idx: '--gpu-idx', worker_ip: '--worker-ip', envs: '-ev/--env',
  peft_model_config: '-lm/--lora-modules', n_worker: '--n-worker', enable_virtual_env: '--enable-virtual-env or --disable-virtual-env',
  virtual_env_packages: '-vp/--virtual-env-package',
};

/** The POST /v1/models body (contract §3.1) the flags describe. */
export function launchBody(options: LaunchOptions, extra: string[]): Record<string, unknown> {
  // `hangar launch hf.co/<org>/<repo>:Q4_K_M`, as `ollama run` and `vllm serve` take it.
  const positional = !options.modelName && extra[0] !== undefined && !extra[0].startsWith('-') ? extra[0] : undefined;
  const modelName = options.modelName ?? positional;
  if (!modelName) throw new CliError('a model name is required: -n <name>, or a hub id as the first argument (hf.co/<org>/<repo>)');
  if (positional !== undefined) extra = extra.slice(1);
  const kwargs = engineKwargs(extra);
  // `--model_path` is Xinference's old spelling of -mp; with both, Xinference refuses too.
  if ('model_path' in kwargs) {
    if (options.modelPath) throw new CliError('Cannot set both --model-path and --model_path');
    if (typeof kwargs.model_path === 'string') options = { ...options, modelPath: kwargs.model_path };
    delete kwargs.model_path;
  }
  // A launch field of its own given as an engine argument (`--n_gpu 1`) would be
  // overwritten by the flag's default in silence; Xinference's CLI fails on these too.
  for (const [field, flag] of Object.entries(OWN_FIELDS)) {
    if (field in kwargs) throw new CliError(`--${field} is a launch option of its own, not an engine argument: use ${flag}`);
  }
  // A hub id's engine follows from its files (GGUF: llama.cpp); the server picks it.
  if (options.modelType === 'LLM' && !options.modelEngine && !modelName.includes('/')) {
    throw new CliError('--model-engine (-en) is required for LLM models, e.g. -en Transformers; `hangar engine -n <name>` lists the engines');
  }
  const body: Record<string, unknown> = {
    ...kwargs,
    model_name: modelName,
    model_type: options.modelType,
    replica: options.replica,
    n_gpu: nGpu(options.nGpu),
  };
  if (options.modelEngine) body.model_engine = options.modelEngine;
  if (options.modelUid) body.model_uid = options.modelUid;
  if (options.sizeInBillions) body.model_size_in_billions = sizeInBillions(options.sizeInBillions);
  if (options.modelFormat) body.model_format = options.modelFormat;
  if (options.quantization) body.quantization = options.quantization;
  if (options.gpuIdx) body.gpu_idx = gpuIdx(options.gpuIdx);
  if (options.modelPath) body.model_path = options.modelPath;
  if (options.workerIp) body.worker_ip = options.workerIp;
  if (options.env) body.envs = envPairs(options.env);
  const imageLoad = options.imageLoraLoadKwargs ? namedValues('--image-lora-load-kwargs', options.imageLoraLoadKwargs) : null;
  const imageFuse = options.imageLoraFuseKwargs ? namedValues('--image-lora-fuse-kwargs', options.imageLoraFuseKwargs) : null;
  if (options.loraModules || imageLoad || imageFuse) {
    body.peft_model_config = { lora_list: options.loraModules ? loraList(options.loraModules) : [], image_lora_load_kwargs: imageLoad, image_lora_fuse_kwargs: imageFuse };
  }
  if (options.quantizationConfig) body.quantization_config = namedValues('--quantization-config', options.quantizationConfig);
  if (options.nWorker !== undefined) body.n_worker = options.nWorker;
  if (options.enableThinking) body.enable_thinking = true;
  if (options.enableVirtualEnv && options.disableVirtualEnv) throw new CliError('--enable-virtual-env and --disable-virtual-env contradict each other');
  if (options.enableVirtualEnv) body.enable_virtual_env = true;
  if (options.disableVirtualEnv) body.enable_virtual_env = false;
  if (options.virtualEnvPackage) body.virtual_env_packages = options.virtualEnvPackage;
  if (options.virtualEnvFindLink) body.virtual_env_find_links = options.virtualEnvFindLink;
  // Checked by the server, which names the field; a bare number is seconds, as in Ollama.
  if (options.keepAlive !== undefined) body.keep_alive = /^-?\d+(\.\d+)?$/.test(options.keepAlive) ? Number(options.keepAlive) : options.keepAlive;
  if (options.force) body.force = true;
  // The others Xinference takes as keyword arguments: refused only where a flag set them too.
  for (const field of Object.keys(kwargs)) {
    if (body[field] !== kwargs[field]) throw new CliError(`--${field} and the flag that sets ${field} are both given; keep one`);
  }
  return body;
}

function nGpu(value: string): number | string | null {
  if (value === 'auto') return 'auto';
  if (value.toLowerCase() === 'none') return null;
  if (!/^\d+$/.test(value)) throw new CliError(`--n-gpu must be auto, none or a whole number, not "${value}"`);
  return Number(value);
}

/** "7" → 7; "0.5", ".5" and "0_5" → "0_5", the catalog's spelling of a fractional size ("1.50" → "1_5"). */
function sizeInBillions(value: string): number | string {
  const n = /^(\d+([._]\d*)?|[._]\d+)$/.test(value.trim()) ? Number(value.trim().replace('_', '.')) : NaN;
  if (!Number.isFinite(n) || n <= 0) throw new CliError(`--size-in-billions must be a positive number such as 7 or 0_5, not "${value}"`);
  return Number.isInteger(n) ? n : String(n).replace('.', '_');
}

function gpuIdx(value: string): number[] {
  // Digits between the commas: Number('') is 0, so "0,,1" would pin GPU 0 twice.
  const parts = value.split(',').map((s) => s.trim());
  if (parts.some((s) => !/^\d+$/.test(s))) throw new CliError(`--gpu-idx must be GPU numbers separated by commas, such as 0,1; not "${value}"`);
  return parts.map(Number);
}

/** Xinference's NAME VALUE pairs (-qc, -ld, -fd), values read as engine arguments are. */
function namedValues(flag: string, values: string[]): Record<string, unknown> {
  if (values.length % 2 !== 0) throw new CliError(`${flag} takes a name and a value: ${flag} NAME VALUE`);
  const out: Record<string, unknown> = {};
  for (let i = 0; i < values.length; i += 2) out[values[i]!] = parseValue(values[i + 1]!);
  return out;
}

/** Xinference's `--lora-modules NAME PATH` pairs, as `peft_model_config.lora_list`. */
function loraList(values: string[]): Array<{ lora_name: string; local_path: string }> {
  if (values.length % 2 !== 0) throw new CliError('--lora-modules takes a name and a path: --lora-modules NAME PATH');
  const list: Array<{ lora_name: string; local_path: string }> = [];
  for (let i = 0; i < values.length; i += 2) list.push({ lora_name: values[i]!, local_path: values[i + 1]! });
  return list;
}

function envPairs(values: string[]): Record<string, string> {
  if (values.length % 2 !== 0) throw new CliError('--env takes a name and a value: --env NAME VALUE');
  const envs: Record<string, string> = {};
  for (let i = 0; i < values.length; i += 2) envs[values[i]!] = values[i + 1]!;
  return envs;
}

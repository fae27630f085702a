import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { HangarError } from '../errors/hangar-error.js';
import { contextLengthOf, stopsOf, templateInTokenizerConfig } from './config-facts.js';
import { readRegularText } from './regular-file.js';

/**
 * A custom LLM registration built from a local model folder (Xinference's
 * `POST /v1/models/llm/auto-register`, docs/registry.md "Auto-register"): what
 * `save_pretrained` leaves there says the context length, the chat template, the stop
 * tokens and roughly the size; the user reviews it, or registers it at once.
 */
export interface AutoRegistrationInput {
  modelPath: string;
  modelName?: string | undefined;
  /** A built-in LLM whose chat format the model shares. */
  modelFamily?: string | undefined;
  /** The abilities of `modelFamily` when it is a built-in family; null otherwise. */
  familyAbilities: readonly string[] | null;
}

type Json = Record<string, unknown>;

const WEIGHT_FILE = /\.(safetensors|bin|pt|pth)$/;
const BYTES_PER_PARAM: Record<string, number> = { float32: 4, float16: 2, bfloat16: 2, float64: 8, int8: 1 };

export async function buildLlmRegistration(input: AutoRegistrationInput): Promise<Json> {
  const folder = path.resolve(input.modelPath);
  const info = await stat(folder).catch(() => null);
  if (!info?.isDirectory()) throw new HangarError('model_path_not_found', [`${input.modelPath} is not a folder.`], { param: 'model_path' });
  const config = (await readJson(path.join(folder, 'config.json'), true))!;
  const tokenizerConfig = (await readJson(path.join(folder, 'tokenizer_config.json'), false)) ?? {};
  const generationConfig = (await readJson(path.join(folder, 'generation_config.json'), false)) ?? {};

  const chatTemplate = await chatTemplateOf(folder, tokenizerConfig);
  const abilities = ['generate'];
  if (chatTemplate) abilities.unshift('chat');
  // Tool calls and images are parsed by family-specific code: claimed only when the
  // model_family given is a built-in family that has them (docs/registry.md).
  if (chatTemplate?.includes('tools') && input.familyAbilities?.includes('tools')) abilities.push('tools');
  if (config.vision_config && input.familyAbilities?.includes('vision')) abilities.push('vision');

  const contextLength = contextLengthOf(config) ?? 2048;
  const stops = stopsOf(config, tokenizerConfig, generationConfig);

  return {
    version: 2,
    model_name: input.modelName ?? nameOf(folder),
    model_description: `Registered from ${folder} (${String(config.model_type ?? 'unknown')} architecture${Array.isArray(config.architectures) ? `, ${config.architectures.join(', ')}` : ''})`,
    // Without one given, the architecture (`llama`, `qwen2`): a family of its own, with its own chat template.
    model_family: input.modelFamily ?? String(config.model_type ?? 'other'),
    model_lang: ['en'],
    model_ability: abilities,
    context_length: contextLength,
    model_specs: [{ model_format: 'pytorch', model_size_in_billions: await sizeInBillions(folder, config), quantization: 'none', model_uri: folder }],
    ...(chatTemplate ? { chat_template: chatTemplate, ...stops } : {}),
  };
}

async function readJson(file: string, required: boolean): Promise<Json | null> {
  // Not a regular file (a pipe would block the read), or one too large to be a config: as if absent.
  const text = await readRegularText(file);
  if (text === null) {
    if (required) throw new HangarError('invalid_field', [`model_path: ${path.dirname(file)} has no ${path.basename(file)} (a regular file); point it at a folder written by save_pretrained`], { param: 'model_path' });
    return null;
  }
  try {
    const value = JSON.parse(text) as unknown;
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Json;
  } catch {
    // reported below
  }
  throw new HangarError('invalid_field', [`model_path: ${file} is not a JSON object`], { param: 'model_path' });
}

/** tokenizer_config.json's `chat_template` (a string, or a list of named ones), or transformers 5's chat_template.jinja. */
async function chatTemplateOf(folder: string, tokenizerConfig: Json): Promise<string | null> {
  const inConfig = templateInTokenizerConfig(tokenizerConfig);
  if (inConfig) return inConfig;
  const jinja = await readRegularText(path.join(folder, 'chat_template.jinja'));
  if (jinja) return jinja;
  const json = await readJson(path.join(folder, 'chat_template.json'), false);
  return typeof json?.chat_template === 'string' ? json.chat_template : null;
}

/** A name the catalog accepts, from the folder's name. */
function nameOf(folder: string): string {
  const name = path.basename(folder).toLowerCase().replace(/[^a-z0-9._-]+/g, '-').replace(/^[-.]+|[-.]+$/g, '');
  return name || 'local-model';
}

/** Parameters from the weight files' bytes and the dtype (billions, two decimals, at least 0.01). */
async function sizeInBillions(folder: string, config: Json): Promise<number> {
  let bytes = 0;
  for (const entry of await readdir(folder, { withFileTypes: true })) {
    if (entry.isFile() && WEIGHT_FILE.test(entry.name)) bytes += (await stat(path.join(folder, entry.name))).size;
  }
  const dtype = String(config.torch_dtype ?? config.dtype ?? 'float32');
  const params = bytes / (BYTES_PER_PARAM[dtype] ?? 2);
  return Math.max(0.01, Math.round((params / 1e9) * 100) / 100);
}

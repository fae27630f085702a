import { existsSync } from 'node:fs';
import { checkModelDir } from '../config/model-dirs.js';
import { HangarError } from '../errors/hangar-error.js';
import type { LaunchRequest } from './launch-request.js';

/** Engines that load `peft_model_config.lora_list` (docs/decisions.md, "LoRA adapters"). */
const LORA_ENGINES: ReadonlySet<string> = new Set(['Transformers', 'vLLM', 'diffusers']);

/**
 * Checks the LoRA adapters a launch names (`peft_model_config.lora_list`): each path
 * must lie inside `--model-dirs` when that is set (as `model_path` must: an adapter is
 * loaded from disk as a model is), and exist, and the engine must load adapters.
 * Otherwise a 400 names the adapter or the engine, instead of a 200 that serves the
 * base model in silence. The folders are checked before existence, so a path outside
 * them tells nothing about what is there.
 */
const LORA_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export function checkLoraAdapters(request: LaunchRequest, engine: string, modelDirs: readonly string[] | null = null): void {
  const config = request.peft_model_config as { lora_list?: Array<{ lora_name: string; local_path: string }> | null } | undefined;
  const adapters = config?.lora_list ?? [];
  if (adapters.length === 0) return;
  const names = new Set<string>();
  adapters.forEach((adapter, i) => {
    if (names.has(adapter.lora_name) || adapter.lora_name === '__base__' || adapter.lora_name.includes(':')) {
      const field = `peft_model_config.lora_list.${i}.lora_name`;
      throw new HangarError('invalid_field', [`${field}: ${adapter.lora_name} is given twice, reserved, or holds a colon`], { param: field });
    }
    // peft names a module after it (a `.` failed the load with its KeyError), and `<uid>:<name>`
    // is a model id clients send (a `/` or a space made ids no URL or uid rule takes).
    if (!LORA_NAME.test(adapter.lora_name)) {
      const field = `peft_model_config.lora_list.${i}.lora_name`;
      throw new HangarError('invalid_field', [`${field}: ${JSON.stringify(adapter.lora_name.slice(0, 80))} must be 1 to 64 letters, digits, "_" or "-"`], { param: field });
    }
    names.add(adapter.lora_name);
    checkModelDir(adapter.local_path, modelDirs, adapter.local_path, `peft_model_config.lora_list.${i}.local_path`);
    if (!existsSync(adapter.local_path)) {
      const field = `peft_model_config.lora_list.${i}.local_path`;
      throw new HangarError('invalid_field', [`${field}: the LoRA adapter ${adapter.lora_name} at ${adapter.local_path} does not exist`], { param: field });
    }
  });
  if (!LORA_ENGINES.has(engine)) {
    throw new HangarError('parameter_unsupported', ['peft_model_config.lora_list', engine, request.model_name, `: LoRA adapters are loaded by the ${[...LORA_ENGINES].join(', ')} engine`], { param: 'peft_model_config.lora_list' });
  }
}

import type { ModelType } from './model-type.js';

/** Everything the supervisor needs to start a runtime for a registered model. */
export interface ResolvedModel {
  modelType: ModelType;
  modelName: string;
  /** The user-facing engine name, as in the engine table (`Transformers`, `sentence_transformers`, a launcher). */
  engine: string;
  /** The runtime's engine class (`engine` in the LOAD message). */
  runtimeEngine: string;
  /** Whether the engine's own work keeps CPU cores busy (EngineDefinition.cpuBound). */
  cpuBound: boolean;
  abilities: string[];
  /** The load spec fields of docs/runtime-protocol.md; `model_uri` is a local path, never a `file://` URI. */
  load: LoadFields;
  description: Record<string, unknown>;
}

export interface LoadFields {
  model_uri?: string;
  model_id?: string;
  model_hub?: string;
  model_revision?: string;
  model_format?: string;
  model_size_in_billions?: number | string;
  quantization?: string;
  /** gguf repositories hold one file per quantization (`{quantization}` in the name)... */
  model_file_name_template?: string;
  /** ... or, for big models, several parts (`{quantization}` and `{part}`), listed per quantization. */
  model_file_name_split_template?: string;
  quantization_parts?: Record<string, string[]>;
  launcher?: string;
  launcher_args: Record<string, unknown>;
  /** LLM: what the runtime needs to format chats and stop generating. */
  chat_template?: string;
  stop?: string[];
  stop_token_ids?: number[];
  context_length?: number;
  tool_parser?: string;
  reasoning_start_tag?: string;
  reasoning_end_tag?: string;
  /** Image, audio, video: the family's engine defaults (`default_model_config`). */
  model_config?: Record<string, unknown>;
  /** Image and video: the family's generation defaults (`default_generate_config`). */
  generate_config?: Record<string, unknown>;
}

/** The files of a split GGUF quantization, in order, as its spec names them; empty for a single file. */
export function ggufPartNames(load: LoadFields): string[] {
  const quantization = load.quantization ?? '';
  const template = load.model_file_name_split_template;
  const parts = load.quantization_parts?.[quantization] ?? [];
  return template ? parts.map((part) => template.replaceAll('{quantization}', quantization).replaceAll('{part}', part)) : [];
}

/** The one GGUF file a spec names for its quantization, where it names one. */
export function ggufFileName(load: LoadFields): string | null {
  return load.model_file_name_template?.replaceAll('{quantization}', load.quantization ?? '') ?? null;
}

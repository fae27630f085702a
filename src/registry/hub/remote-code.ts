import { TRANSFORMERS_MODEL_TYPES, TRANSFORMERS_VERSION } from './transformers-model-types.js';

/** What a checkpoint's config.json says of the code that loads it. */
export interface ArchitectureFacts {
  /** config.json's `model_type` (null: none given). */
  modelType: string | null;
  /** Its `auto_map`: classes in the repository's own Python files. */
  ownCode: boolean;
}

export function architectureFacts(config: Record<string, unknown>): ArchitectureFacts {
  const type = config.model_type;
  const autoMap = config.auto_map;
  return { modelType: typeof type === 'string' && type !== '' ? type : null, ownCode: typeof autoMap === 'object' && autoMap !== null && Object.keys(autoMap).length > 0 };
}

/**
 * Why the Transformers engine cannot load a checkpoint as launched, known from its
 * config before a byte of weights is downloaded (docs/registry.md, "Launch by hub id");
 * null when it can. transformers loads a `model_type` it knows with its own code (an
 * `auto_map` beside it is then ignored); one it does not know loads only with the
 * repository's own code, which needs `trust_remote_code`, and without an `auto_map`
 * not at all. Both failed after the whole download before.
 */
export function transformersRefusal(facts: ArchitectureFacts, trustRemoteCode: boolean): { field: 'trust_remote_code' | 'model_name'; why: string } | null {
  if (facts.modelType === null || TRANSFORMERS_MODEL_TYPES.has(facts.modelType)) return null;
  if (facts.ownCode) {
    return trustRemoteCode
      ? null
      : { field: 'trust_remote_code', why: `its architecture (model_type ${facts.modelType}) is not in transformers ${TRANSFORMERS_VERSION}, and loads only with the repository's own code (config.json's auto_map): launch it with trust_remote_code: true, which runs that code and needs the models:code permission` };
  }
  return { field: 'model_name', why: `its architecture (model_type ${facts.modelType}) is not in transformers ${TRANSFORMERS_VERSION}, and the repository brings no code for it (no auto_map): the Transformers engine cannot load it; a GGUF of it runs on llama.cpp, and vLLM on a GPU host may know it` };
}

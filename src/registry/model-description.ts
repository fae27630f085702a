import type { FlatSpec, TypedRecord } from './model-record.js';

/**
 * The type's description keys of a launched model, which `GET /v1/models` and
 * `GET /v1/models/{uid}` show next to the instance's own keys (contract §3.2, notes
 * §3.2). Xinference builds them from the family and the chosen spec; so does this.
 */
export function describeModel(typed: TypedRecord, spec: FlatSpec | undefined): Record<string, unknown> {
  const { type, record } = typed;
  switch (type) {
    case 'LLM':
      return {
        model_name: record.model_name,
        model_lang: record.model_lang,
        model_ability: record.model_ability,
        model_description: record.model_description,
        model_format: spec?.model_format ?? null,
        model_size_in_billions: spec?.['model_size_in_billions'] ?? null,
        // Xinference falls back to the name: built-ins are their own family.
        model_family: record.model_family ?? record.model_name,
        quantization: spec?.quantization ?? null,
        multimodal_projector: null,
        model_hub: spec?.model_hub ?? null,
        revision: spec?.model_revision ?? null,
        context_length: record.context_length,
      };
    case 'embedding':
      return {
        model_name: record.model_name,
        dimensions: record.dimensions,
        max_tokens: record.max_tokens,
        language: record.language,
        model_hub: spec?.model_hub ?? null,
        model_revision: spec?.model_revision ?? null,
        quantization: spec?.quantization ?? null,
      };
    case 'rerank':
      return {
        model_name: record.model_name,
        type: record.type,
        language: record.language,
        model_revision: spec?.model_revision ?? null,
      };
    case 'image':
    case 'audio':
    case 'video':
      return {
        model_name: record.model_name,
        model_family: record.model_family,
        model_revision: spec?.model_revision ?? null,
        model_ability: record.model_ability,
      };
    case 'flexible':
      return { model_name: record.model_name, launcher: record.launcher, launcher_args: record.launcher_args };
  }
}

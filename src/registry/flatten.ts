import type { z } from 'zod';
import type { ModelType } from './model-type.js';
import { recordSchema, type FlatSpec, type MediaRecord, type ModelRecord } from './model-record.js';
import type { hubSourceSchema, modelSrcSchema } from './schemas/common.js';
import { embeddingBuiltinSchema } from './schemas/embedding.js';
import { llmBuiltinSchema } from './schemas/llm.js';
import { mediaBuiltinSchema, type MediaType } from './schemas/media.js';
import { rerankBuiltinSchema } from './schemas/rerank.js';

/**
 * Built-in files use Xinference's compact form: each spec (or, for image, audio and
 * video, the family) names per hub a `model_id` and a list of `quantizations`. The
 * registry works on, and the REST API shows, the flattened form: one spec per
 * (hub × quantization) with a singular `quantization` and `model_hub` (notes §8.2).
 * Hub order is the file's, so the first hub listed is the default one.
 */
export function flattenBuiltin(type: ModelType, raw: unknown): ModelRecord {
  switch (type) {
    case 'LLM':
      return flattenSpecFamily(type, llmBuiltinSchema.parse(raw));
    case 'embedding':
      return flattenSpecFamily(type, embeddingBuiltinSchema.parse(raw));
    case 'rerank':
      return flattenSpecFamily(type, rerankBuiltinSchema.parse(raw));
    case 'image':
    case 'audio':
    case 'video':
      return flattenMediaFamily(type, raw);
    case 'flexible':
      // Flexible models are custom only (notes §8.1): there is no compact form.
      throw new Error('flexible models have no built-in form');
  }
}

type ModelSrc = z.output<typeof modelSrcSchema>;
type HubSource = z.output<typeof hubSourceSchema>;

function hubEntries(src: ModelSrc | undefined): Array<[FlatSpec['model_hub'] & string, HubSource]> {
  return Object.entries(src ?? {}).filter((entry): entry is [FlatSpec['model_hub'] & string, HubSource] => entry[1] !== undefined);
}

function flattenSpecFamily(type: 'LLM' | 'embedding' | 'rerank', family: { model_specs: Array<{ model_src: ModelSrc }> }): ModelRecord {
  const specs = family.model_specs.flatMap(({ model_src, ...spec }) =>
    hubEntries(model_src).flatMap(([hub, { model_id, quantizations, model_revision, ...hubExtras }]) =>
      quantizations.map((quantization) => ({
        ...spec,
        ...hubExtras,
        quantization,
        model_id,
        model_hub: hub,
        model_uri: null,
        model_revision: model_revision ?? null,
      })),
    ),
  );
  return recordSchema(type).parse({ ...family, model_specs: specs });
}

function flattenMediaFamily(type: MediaType, raw: unknown): MediaRecord {
  const { model_src, ...family } = mediaBuiltinSchema(type).parse(raw);
  const specs = hubEntries(model_src).map(([hub, source]) =>
    mediaSpec({ model_id: source.model_id, model_hub: hub, model_uri: null, model_revision: source.model_revision ?? null }),
  );
  return mediaRecord(type, family, specs.length > 0 ? specs : [mediaSpec({ model_id: null, model_hub: null, model_uri: null, model_revision: null })]);
}

/** One spec of an image, audio or video model; their weights have no format choice. */
export function mediaSpec(source: Pick<FlatSpec, 'model_id' | 'model_hub' | 'model_uri' | 'model_revision'>): FlatSpec {
  return { model_format: 'pytorch', quantization: 'none', ...source };
}

/**
 * The record keeps Xinference's top-level `model_id`/`model_hub`/`model_uri` from the
 * Hugging Face variant when there is one (what Xinference's GET shows), else the first.
 */
export function mediaRecord(type: MediaType, family: object, specs: FlatSpec[]): MediaRecord {
  const preferred = specs.find((s) => s.model_hub === 'huggingface') ?? specs[0];
  return recordSchema(type).parse({
    ...family,
    model_id: preferred?.model_id ?? null,
    model_hub: preferred?.model_hub ?? null,
    model_revision: preferred?.model_revision ?? null,
    model_uri: preferred?.model_uri ?? null,
    model_specs: specs,
  });
}

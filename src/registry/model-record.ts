import type { z } from 'zod';
import type { ModelType } from './model-type.js';
import type { FlatSpec } from './schemas/common.js';
import { embeddingRecordSchema, type EmbeddingRecord } from './schemas/embedding.js';
import { flexibleRecordSchema, type FlexibleRecord } from './schemas/flexible.js';
import { llmRecordSchema, type LlmRecord } from './schemas/llm.js';
import { mediaRecordSchema, type MediaRecord } from './schemas/media.js';
import { rerankRecordSchema, type RerankRecord } from './schemas/rerank.js';

export type { EmbeddingRecord, FlexibleRecord, LlmRecord, MediaRecord, RerankRecord, FlatSpec };

/** The flattened record of each type: what the REST API shows (notes §8.2). */
export interface RecordByType {
  LLM: LlmRecord;
  embedding: EmbeddingRecord;
  rerank: RerankRecord;
  image: MediaRecord;
  audio: MediaRecord;
  video: MediaRecord;
  flexible: FlexibleRecord;
}
export type ModelRecord = RecordByType[ModelType];

/** A record with the type it belongs to, so code can narrow on `type`. */
export type TypedRecord = { [T in ModelType]: { type: T; record: RecordByType[T] } }[ModelType];

const recordSchemas: { [T in ModelType]: z.ZodType<RecordByType[T], unknown> } = {
  LLM: llmRecordSchema,
  embedding: embeddingRecordSchema,
  rerank: rerankRecordSchema,
  image: mediaRecordSchema('image'),
  audio: mediaRecordSchema('audio'),
  video: mediaRecordSchema('video'),
  flexible: flexibleRecordSchema,
};

export function recordSchema<T extends ModelType>(type: T): z.ZodType<RecordByType[T], unknown> {
  return recordSchemas[type];
}

/** The specs of a record; a flexible model has none (its `model_uri` is the model). */
export function specsOf(record: ModelRecord): FlatSpec[] {
  return 'model_specs' in record ? (record.model_specs as FlatSpec[]) : [];
}

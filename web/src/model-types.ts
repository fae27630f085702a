/** The model types (contract §1), exact and case-sensitive, with the labels the tabs show. */
export const MODEL_TYPES = [
  { type: 'LLM', label: 'Language models' },
  { type: 'embedding', label: 'Embedding' },
  { type: 'rerank', label: 'Rerank' },
  { type: 'image', label: 'Image' },
  { type: 'audio', label: 'Audio' },
  { type: 'video', label: 'Video' },
  { type: 'flexible', label: 'Flexible' },
] as const;

export type ModelType = (typeof MODEL_TYPES)[number]['type'];

export function isModelType(value: string | undefined): value is ModelType {
  return MODEL_TYPES.some((t) => t.type === value);
}

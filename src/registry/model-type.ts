/** Model types, exact and case-sensitive as Xinference spells them (contract §1). */
export const MODEL_TYPES = ['LLM', 'embedding', 'rerank', 'image', 'audio', 'video', 'flexible'] as const;
export type ModelType = (typeof MODEL_TYPES)[number];

export function isModelType(value: unknown): value is ModelType {
  return typeof value === 'string' && (MODEL_TYPES as readonly string[]).includes(value);
}

/** The lower-case folder name under `<home>/model/v2/` (Xinference's registry names). */
export function registryFolder(type: ModelType): string {
  return type === 'LLM' ? 'llm' : type;
}

import type { ModelType } from '../registry/index.js';

/** A launch's model as the registry resolves it: the supervisor's ModelResolver query, and the memory estimate's. */
export interface ModelQuery {
  model_type: ModelType;
  model_name: string;
  model_engine?: string | undefined;
  model_format?: string | undefined;
  model_size_in_billions?: number | string | undefined;
  quantization?: string | undefined;
  download_hub?: string | undefined;
  preferred_hub?: string | undefined;
  /** The launch's extra fields: an engine that lists its options has them checked here. */
  engine_kwargs?: Record<string, unknown>;
}

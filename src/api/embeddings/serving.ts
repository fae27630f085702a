import { HangarError } from '../../errors/hangar-error.js';
import type { CallTarget, Supervisor } from '../../supervisor/supervisor.js';
import type { EmbeddingsBody } from './schema.js';

const ROUTE = '/v1/embeddings';

/** Embeddings go to embedding models, and to LLMs whose registration has `embed`. */
export function prepareEmbeddings(supervisor: Supervisor, body: EmbeddingsBody): { target: CallTarget; args: unknown[]; kwargs: Record<string, unknown> } {
  const instance = supervisor.require(body.model);
  const type = instance.resolved.modelType;
  if (type !== 'embedding' && !(type === 'LLM' && instance.abilities.includes('embed'))) {
    const can = instance.abilities.length > 0 ? instance.abilities.join(', ') : type;
    throw new HangarError('ability_missing', [body.model, `embeddings (it is ${article(type)} ${type} model)`, can], { param: 'model' });
  }
  // One shape for the runtime: a list of strings, or a list of token-id lists.
  const input = body.input;
  const inputs = typeof input === 'string' ? [input] : typeof input[0] === 'number' ? [input as number[]] : (input as string[] | number[][]);
  const kwargs: Record<string, unknown> = { truncate: body.truncate ?? true };
  if (body.dimensions) kwargs.dimensions = body.dimensions;
  return { target: { uid: body.model, route: ROUTE, types: ['embedding', 'LLM'] }, args: [inputs], kwargs };
}

interface EmbedResult {
  embeddings: number[][];
  prompt_tokens: number;
}

/** OpenAI's list shape, plus Xinference's `model_replica`. base64 is little-endian float32, as OpenAI encodes it. */
export function embeddingsResponse(body: EmbeddingsBody, value: unknown, replica: string): Record<string, unknown> {
  const result = value as EmbedResult;
  const base64 = body.encoding_format === 'base64';
  return {
    object: 'list',
    model: body.model,
    model_replica: replica,
    data: result.embeddings.map((vector, index) => ({
      index,
      object: 'embedding',
      embedding: base64 ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector,
    })),
    usage: { prompt_tokens: result.prompt_tokens, total_tokens: result.prompt_tokens },
  };
}

/** `an` before a vowel's sound (`an LLM`, `an embedding`), else `a`. */
export function article(word: string): string {
  return /^([aeio]|LLM)/i.test(word) ? 'an' : 'a';
}

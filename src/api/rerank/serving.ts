import { randomUUID } from 'node:crypto';
import { HangarError } from '../../errors/hangar-error.js';
import { engineKwargs } from '../media/engine-kwargs.js';
import type { CallTarget, Supervisor } from '../../supervisor/supervisor.js';
import type { RerankBody } from './schema.js';
import { article } from '../embeddings/serving.js';

export function prepareRerank(supervisor: Supervisor, body: RerankBody): { target: CallTarget; args: unknown[]; kwargs: Record<string, unknown> } {
  const instance = supervisor.require(body.model);
  const type = instance.resolved.modelType;
  if (type !== 'rerank') {
    const can = instance.abilities.length > 0 ? instance.abilities.join(', ') : type;
    throw new HangarError('ability_missing', [body.model, `rerank (it is ${article(type)} ${type} model)`, can], { param: 'model' });
  }
  // Cohere's fields that would change the scores: refused by name, not dropped.
  for (const [field, why] of COHERE_ONLY) {
    const value = (body as Record<string, unknown>)[field];
    if (value !== undefined && value !== null) throw new HangarError('field_unsupported', [field, why], { param: field });
  }
  const extra = engineKwargs(body.kwargs);
  return {
    target: { uid: body.model, route: '/v1/rerank', types: ['rerank'] },
    args: [body.query, body.documents],
    // Xinference's `kwargs` (a JSON object in a string) go to the engine, which refuses
    // an argument it does not take by name rather than rank without it.
    kwargs: { ...extra, truncate: body.truncate ?? extra.truncate ?? true },
  };
}

const COHERE_ONLY: ReadonlyArray<[string, string]> = [
  ['max_tokens_per_doc', 'a document is cut only where the query and it together pass the model\'s max_tokens (truncate: true); send documents already cut'],
  ['rank_fields', 'a document is a string or {"text": ...}, and its text is what is scored'],
];

interface RerankResult {
  scores: number[];
  input_tokens: number;
}

/** Results sorted by score, best first, cut to `top_n` (contract §4). */
export function rerankResponse(body: RerankBody, value: unknown): Record<string, unknown> {
  const { scores, input_tokens } = value as RerankResult;
  const ranked = scores
    .map((relevance_score, index) => ({ index, relevance_score }))
    .sort((a, b) => b.relevance_score - a.relevance_score)
    .slice(0, body.top_n ?? scores.length);
  return {
    id: randomUUID(),
    // vLLM's and Jina's fields beside the contract's: the model, and the tokens read.
    model: body.model,
    results: ranked.map((r) => ({ ...r, document: body.return_documents ? { text: body.documents[r.index] } : null })),
    meta: {
      api_version: null,
      billed_units: null,
      tokens: body.return_len ? { input_tokens, output_tokens: 0 } : null,
      warnings: null,
    },
    usage: { total_tokens: input_tokens },
  };
}

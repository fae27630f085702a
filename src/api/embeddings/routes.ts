import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Supervisor } from '../../supervisor/supervisor.js';
import { needs } from '../auth/route-permission.js';
import { abortOnDisconnect } from '../client-disconnect.js';
import { setOverheadHeader } from '../overhead.js';
import { convertIdsBody, embeddingsBody } from './schema.js';
import { embeddingsResponse, prepareEmbeddings } from './serving.js';

export const embeddingsRoutes: FastifyPluginAsync<{ supervisor: Supervisor }> = async (fastify, { supervisor }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  app.post('/v1/embeddings', { ...needs('models:read', ['embedding', 'LLM'], { ability: 'embed', what: 'embeddings (it is an LLM model)' }), schema: { body: embeddingsBody, tags: ['inference'] } }, async (request, reply) => {
    const call = prepareEmbeddings(supervisor, request.body);
    const result = await supervisor.call(call.target, 'embed', call.args, call.kwargs, abortOnDisconnect(reply));
    setOverheadHeader(request, reply, result.runtimeMs);
    return embeddingsResponse(request.body, result.value, result.replica);
  });

  app.post('/v1/convert_ids_to_tokens', { ...needs('models:read', ['embedding']), schema: { body: convertIdsBody, tags: ['inference'] } }, async (request, reply) => {
    const { model, input, skip_special_tokens: skip } = request.body;
    const target = { uid: model, route: '/v1/convert_ids_to_tokens', types: ['embedding' as const] };
    const result = await supervisor.call(target, 'convert_ids_to_tokens', [input], { skip_special_tokens: skip }, abortOnDisconnect(reply));
    setOverheadHeader(request, reply, result.runtimeMs);
    return result.value;
  });
};

import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Supervisor } from '../../supervisor/supervisor.js';
import { needs } from '../auth/route-permission.js';
import { abortOnDisconnect } from '../client-disconnect.js';
import { setOverheadHeader } from '../overhead.js';
import { embeddingsBody } from './schema.js';
import { embeddingsResponse, prepareEmbeddings } from './serving.js';

export const embeddingsRoutes: FastifyPluginAsync<{ supervisor: Supervisor }> = async (fastify, { supervisor }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  app.post('/v1/embeddings', { ...needs('models:read'), schema: { body: embeddingsBody, tags: ['inference'] } }, async (request, reply) => {
    const call = prepareEmbeddings(supervisor, request.body);
    const result = await supervisor.call(call.target, 'embed', call.args, call.kwargs, abortOnDisconnect(reply));
    setOverheadHeader(request, reply, result.runtimeMs);
    return embeddingsResponse(request.body, result.value, result.replica);
  });
};

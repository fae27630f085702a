import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Supervisor } from '../../supervisor/supervisor.js';
import { needs } from '../auth/route-permission.js';
import { abortOnDisconnect } from '../client-disconnect.js';
import { setOverheadHeader } from '../overhead.js';
import { rerankBody } from './schema.js';
import { prepareRerank, rerankResponse } from './serving.js';

export const rerankRoutes: FastifyPluginAsync<{ supervisor: Supervisor }> = async (fastify, { supervisor }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  // /v2/rerank: where Cohere's v2 client (and vLLM) send the same request.
  for (const url of ['/v1/rerank', '/v2/rerank']) {
    app.post(url, { ...needs('models:read', ['rerank']), schema: { body: rerankBody, tags: ['inference'] } }, async (request, reply) => {
      const call = prepareRerank(supervisor, request.body);
      const result = await supervisor.call(call.target, 'rerank', call.args, call.kwargs, abortOnDisconnect(reply));
      setOverheadHeader(request, reply, result.runtimeMs);
      return rerankResponse(request.body, result.value);
    });
  }
};

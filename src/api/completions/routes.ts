import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Supervisor } from '../../supervisor/supervisor.js';
import { needs } from '../auth/route-permission.js';
import { serveGeneration } from '../llm/serve-generation.js';
import { openAiSse } from '../sse/event-stream.js';
import { completionBody } from './schema.js';
import { completion, completionChunks, prepareCompletion } from './serving.js';

export const completionRoutes: FastifyPluginAsync<{ supervisor: Supervisor }> = async (fastify, { supervisor }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();

  app.post('/v1/completions', { ...needs('models:read'), ...openAiSse, schema: { body: completionBody, tags: ['inference'] } }, async (request, reply) => {
    const body = request.body;
    return serveGeneration(supervisor, request, reply, {
      ...prepareCompletion(supervisor, body),
      method: 'generate',
      stream: body.stream === true,
      answer: (value) => completion(body.model, value),
      events: (source) => completionChunks(body.model, source, body.stream_options?.include_usage === true),
    });
  });
};

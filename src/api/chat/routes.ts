import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Supervisor } from '../../supervisor/supervisor.js';
import { needs } from '../auth/route-permission.js';
import { serveGeneration } from '../llm/serve-generation.js';
import { openAiSse } from '../sse/event-stream.js';
import { chatBody } from './schema.js';
import { chatChunks, chatCompletion, prepareChat } from './serving.js';

export const chatRoutes: FastifyPluginAsync<{ supervisor: Supervisor }> = async (fastify, { supervisor }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();

  app.post('/v1/chat/completions', { ...needs('models:read'), ...openAiSse, schema: { body: chatBody, tags: ['inference'] } }, async (request, reply) => {
    const body = request.body;
    return serveGeneration(supervisor, request, reply, {
      ...prepareChat(supervisor, body),
      method: 'chat',
      stream: body.stream === true,
      answer: (value) => chatCompletion(body.model, value),
      events: (source) => chatChunks(body.model, source, body.stream_options?.include_usage === true),
    });
  });
};

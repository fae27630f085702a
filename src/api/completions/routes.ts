import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { StreamingSettings } from '../../config/config.js';
import type { Supervisor } from '../../supervisor/supervisor.js';
import { needs } from '../auth/route-permission.js';
import { serveGeneration } from '../llm/serve-generation.js';
import { completionBody } from './schema.js';
import { completion, prepareCompletion } from './serving.js';
import { completionStreamFormat } from './stream-events.js';

export const completionRoutes: FastifyPluginAsync<{ supervisor: Supervisor; streaming: StreamingSettings }> = async (fastify, { supervisor, streaming }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();

  app.post('/v1/completions', { ...needs('models:read', ['LLM'], { ability: 'generate', what: 'text completion (`generate`)' }), schema: { body: completionBody, tags: ['inference'] } }, async (request, reply) => {
    const body = request.body;
    return serveGeneration(supervisor, streaming, request, reply, {
      ...prepareCompletion(supervisor, body),
      method: 'generate',
      stream: body.stream === true,
      n: body.n ?? 1,
      answer: (value) => completion(body.model, value),
      streamInterval: body.stream_options?.stream_interval ?? null,
      includeUsage: body.stream_options?.include_usage === true,
      format: (choice) => completionStreamFormat(body.model, body.stream_options?.include_usage === true, choice),
    });
  });
};

import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { StreamingSettings } from '../../config/config.js';
import type { ImageFetchSettings } from '../../config/image-fetch.js';
import type { Supervisor } from '../../supervisor/supervisor.js';
import { CHAT_ABILITY, needs } from '../auth/route-permission.js';
import { abortOnDisconnect } from '../client-disconnect.js';
import { serveGeneration } from '../llm/serve-generation.js';
import { chatBody } from './schema.js';
import { chatCompletion, prepareChatWithImages } from './serving.js';
import { chatStreamFormat } from './stream-events.js';

export const chatRoutes: FastifyPluginAsync<{ supervisor: Supervisor; streaming: StreamingSettings; images: ImageFetchSettings }> = async (fastify, { supervisor, streaming, images }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();

  app.post('/v1/chat/completions', { ...needs('models:read', ['LLM'], CHAT_ABILITY), schema: { body: chatBody, tags: ['inference'] } }, async (request, reply) => {
    const body = request.body;
    return serveGeneration(supervisor, streaming, request, reply, {
      ...(await prepareChatWithImages(supervisor, body, images, abortOnDisconnect(reply))),
      method: 'chat',
      stream: body.stream === true,
      n: body.n ?? 1,
      answer: (value) => chatCompletion(body.model, value),
      streamInterval: body.stream_options?.stream_interval ?? null,
      includeUsage: body.stream_options?.include_usage === true,
      format: (choice) => chatStreamFormat(body.model, body.stream_options?.include_usage === true, choice),
    });
  });
};

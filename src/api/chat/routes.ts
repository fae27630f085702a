import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Supervisor } from '../../supervisor/supervisor.js';
import { needs } from '../auth/route-permission.js';
import { abortOnDisconnect } from '../client-disconnect.js';
import { setOverheadHeader } from '../overhead.js';
import { openAiSse, sendEventStream } from '../sse/event-stream.js';
import { chatBody } from './schema.js';
import { chatChunks, chatCompletion, prepareChat } from './serving.js';

export const chatRoutes: FastifyPluginAsync<{ supervisor: Supervisor }> = async (fastify, { supervisor }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();

  app.post('/v1/chat/completions', { ...needs('models:read'), ...openAiSse, schema: { body: chatBody, tags: ['inference'] } }, async (request, reply) => {
    const body = request.body;
    const call = prepareChat(supervisor, body);
    if (!body.stream) {
      const result = await supervisor.call(call.target, 'chat', call.args, call.kwargs, abortOnDisconnect(reply));
      setOverheadHeader(request, reply, result.runtimeMs);
      return chatCompletion(body.model, result.value);
    }
    const source = supervisor.stream(call.target, 'chat', call.args, call.kwargs);
    const dispatchedAt = performance.now();
    const events = chatChunks(body.model, source, body.stream_options?.include_usage === true);
    // Overhead of a stream: everything before the call went to the runtime.
    await sendEventStream(request, reply, events, () => setOverheadHeader(request, reply, performance.now() - dispatchedAt));
  });
};

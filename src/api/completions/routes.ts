import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Supervisor } from '../../supervisor/supervisor.js';
import { needs } from '../auth/route-permission.js';
import { abortOnDisconnect } from '../client-disconnect.js';
import { setOverheadHeader } from '../overhead.js';
import { openAiSse, sendEventStream } from '../sse/event-stream.js';
import { completionBody } from './schema.js';
import { completion, completionChunks, prepareCompletion } from './serving.js';

export const completionRoutes: FastifyPluginAsync<{ supervisor: Supervisor }> = async (fastify, { supervisor }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();

  app.post('/v1/completions', { ...needs('models:read'), ...openAiSse, schema: { body: completionBody, tags: ['inference'] } }, async (request, reply) => {
    const body = request.body;
    const call = prepareCompletion(supervisor, body);
    if (!body.stream) {
      const result = await supervisor.call(call.target, 'generate', call.args, call.kwargs, abortOnDisconnect(reply));
      setOverheadHeader(request, reply, result.runtimeMs);
      return completion(body.model, result.value);
    }
    const source = supervisor.stream(call.target, 'generate', call.args, call.kwargs);
    const dispatchedAt = performance.now();
    const events = completionChunks(body.model, source, body.stream_options?.include_usage === true);
    await sendEventStream(request, reply, events, () => setOverheadHeader(request, reply, performance.now() - dispatchedAt));
  });
};

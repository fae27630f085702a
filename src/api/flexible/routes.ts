import type { FastifyPluginAsync } from 'fastify';
import { needs } from '../auth/route-permission.js';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Supervisor } from '../../supervisor/supervisor.js';
import { abortOnDisconnect } from '../client-disconnect.js';
import { setOverheadHeader } from '../overhead.js';
import { flexibleInferBody } from './schema.js';

export const flexibleRoutes: FastifyPluginAsync<{ supervisor: Supervisor }> = async (fastify, { supervisor }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();

  app.post('/v1/flexible/infers', { ...needs('models:read', ['flexible']), schema: { body: flexibleInferBody, tags: ['inference'] } }, async (request, reply) => {
    const { model, args, ...kwargs } = request.body;
    const result = await supervisor.call(
      { uid: model, route: '/v1/flexible/infers', types: ['flexible'] },
      'infer',
      args,
      kwargs,
      abortOnDisconnect(reply),
    );
    setOverheadHeader(request, reply, result.runtimeMs);
    // Serialised by hand: a result that is a plain string must still go out as JSON.
    return reply.type('application/json; charset=utf-8').send(JSON.stringify(result.value ?? null));
  });
};

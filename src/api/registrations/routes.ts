import type { FastifyPluginAsync } from 'fastify';
import { needs } from '../auth/route-permission.js';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Registry } from '../../registry/index.js';
import { engineParams, listQuery, registerBody, typeNameParams, typeParams } from './schema.js';
import { codePower } from '../auth/code-power.js';

/** Launchable models: built-in catalog and custom registrations (contract §2). */
export const registrationRoutes: FastifyPluginAsync<{ registry: Registry }> = async (fastify, { registry }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const tags = ['registrations'];

  app.get('/v1/model_registrations/:model_type', { ...needs('models:list'), schema: { params: typeParams, querystring: listQuery, tags } }, async (request) =>
    registry.list(request.params.model_type, { detailed: request.query.detailed }),
  );

  app.get('/v1/model_registrations/:model_type/:model_name', { ...needs('models:list'), schema: { params: typeNameParams, tags } }, async (request) =>
    registry.get(request.params.model_type, request.params.model_name),
  );

  app.post('/v1/model_registrations/:model_type', { ...needs('models:register'), schema: { params: typeParams, body: registerBody, tags } }, async (request) => {
    await registry.register(request.params.model_type, { model: request.body.model }, request.body.persist, codePower(request, 'model.register.code', request.params.model_type));
    return null;
  });

  app.delete('/v1/model_registrations/:model_type/:model_name', { ...needs('models:unregister'), schema: { params: typeNameParams, tags } }, async (request) => {
    await registry.unregister(request.params.model_type, request.params.model_name);
    return null;
  });

  // Unknown names answer 200 null, as Xinference does: the UI probes engines for any name.
  app.get('/v1/engines/:model_name', { ...needs('models:list'), schema: { params: engineParams, tags } }, async (request) =>
    registry.engines('LLM', request.params.model_name),
  );

  app.get('/v1/engines/:model_type/:model_name', { ...needs('models:list'), schema: { params: typeNameParams, tags } }, async (request) =>
    registry.engines(request.params.model_type, request.params.model_name),
  );
};

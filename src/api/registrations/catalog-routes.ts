import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Registry } from '../../registry/index.js';
import { needs } from '../auth/route-permission.js';
import { typeNameParams } from './schema.js';

/**
 * Catalog helpers Xinference's UI and clients read (docs/registry.md, "Catalog
 * helpers"). Static paths under /v1/models/: fastify matches them before
 * `/v1/models/:model_uid`, as Xinference registers them first.
 */
export const catalogRoutes: FastifyPluginAsync<{ registry: Registry }> = async (fastify, { registry }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const tags = ['registrations'];

  app.get('/v1/models/families', { ...needs('models:list'), schema: { tags } }, async () => registry.llmSummaries().families);
  app.get('/v1/models/prompts', { ...needs('models:list'), schema: { tags } }, async () => registry.llmSummaries().prompts);
  app.get('/v1/models/vllm-supported', { ...needs('models:list'), schema: { tags } }, async () => registry.llmSummaries().vllm);
  app.get('/v1/models/:model_type/:model_name/versions', { ...needs('models:list'), schema: { params: typeNameParams, tags } }, async (request) =>
    registry.versions(request.params.model_type, request.params.model_name),
  );
};

import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Registry } from '../../registry/index.js';
import type { Supervisor } from '../../supervisor/supervisor.js';
import { hubEnvironment } from '../../supervisor/memory-accounting.js';
import { needs } from '../auth/route-permission.js';
import { hubTimeoutMs } from '../../config/hub-settings.js';
import { searchHub } from './hub-search.js';

const searchQuery = z.object({
  search: z.string().max(200, 'must be at most 200 characters').default(''),
  format: z.enum(['gguf', 'pytorch'], { error: 'must be gguf or pytorch' }).optional(),
  task: z.string().regex(/^[a-z0-9-]{1,64}$/, 'must be a hub pipeline tag such as text-generation').optional(),
  limit: z.coerce.number().int().min(1).max(50, 'must be at most 50').default(10),
});

/** `GET /v1/hub/models` (a Hangar extension, docs/registry.md "Hub search"). */
export const hubRoutes: FastifyPluginAsync<{ supervisor: Supervisor; registry: Registry }> = async (fastify, { supervisor, registry }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  app.get('/v1/hub/models', { ...needs('models:list'), schema: { querystring: searchQuery, tags: ['registrations'] } }, async (request) =>
    searchHub(request.query, { env: hubEnvironment({}), timeoutMs: hubTimeoutMs(), cacheDir: registry.cache.root, devices: supervisor.memoryUse() }),
  );
};

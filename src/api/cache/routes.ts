import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { HangarError } from '../../errors/hangar-error.js';
import type { CacheEntry, Registry } from '../../registry/index.js';
import type { Supervisor } from '../../supervisor/supervisor.js';
import { needs } from '../auth/route-permission.js';

const listQuery = z.object({ model_name: z.string().max(256).optional(), worker_ip: z.string().max(256).optional() });
const versionQuery = z.object({
  model_version: z.string({ error: (issue) => (issue.input === undefined ? 'model_version is required: one that GET /v1/cache/models (hangar cached) lists' : undefined) }).min(1).max(512),
  worker_ip: z.string().max(256).optional(),
});

/**
 * The weights cache (Xinference's /v1/cache/models, docs/registry.md "Cache"): what is
 * on disk under `<home>/cache`, its files, and deleting one repository, refused while
 * a model that is running or launching uses it.
 */
export const cacheRoutes: FastifyPluginAsync<{ registry: Registry; supervisor: Supervisor }> = async (fastify, { registry, supervisor }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const tags = ['cache'];

  /** Uids of models (running or launching) that load this entry's repository; a failed launch holds nothing. */
  const usersOf = (entry: CacheEntry): string[] =>
    supervisor
      .listInstances({})
      .filter((i) => i.state !== 'ERROR' && i.state !== 'TERMINATED')
      .filter((i) => {
        const load = i.resolved.load;
        const id = load.model_id?.replace('{quantization}', load.quantization ?? '');
        return id !== undefined && id.toLowerCase() === entry.model_id.toLowerCase() && (load.model_hub ?? 'huggingface') === entry.hub;
      })
      .map((i) => i.uid);

  const find = async (version: string): Promise<CacheEntry> => {
    const entry = await registry.cache.find(version);
    if (!entry) throw new HangarError('cache_entry_not_found', [version], { param: 'model_version' });
    return entry;
  };

  app.get('/v1/cache/models', { ...needs('models:list'), schema: { querystring: listQuery, tags } }, async (request) => {
    const rows = (await registry.cache.list()).flatMap((entry): Array<Record<string, unknown>> => {
      const names = registry.namesForRepository(entry.model_id, entry.hub);
      const base = { model_version: entry.model_version, model_id: entry.model_id, model_hub: entry.hub, path: entry.path, real_path: entry.path, actual_size: entry.size, in_use_by: usersOf(entry) };
      // Not in the catalog (a repository fetched for a custom registration): its id is its name.
      if (names.length === 0) return [{ model_name: entry.model_id, model_type: null, model_format: null, quantization: null, ...base }];
      return names.map((n) => ({ ...n, ...base }));
    });
    const wanted = request.query.model_name;
    return { list: wanted ? rows.filter((r) => r.model_name === wanted || r.model_id === wanted) : rows };
  });

  app.get('/v1/cache/models/files', { ...needs('models:list'), schema: { querystring: versionQuery, tags } }, async (request) => {
    const entry = await find(request.query.model_version);
    return { model_version: entry.model_version, worker_ip: request.query.worker_ip ?? null, paths: await registry.cache.files(entry) };
  });

  app.delete('/v1/cache/models', { ...needs('admin'), schema: { querystring: versionQuery, tags } }, async (request) => {
    const entry = await find(request.query.model_version);
    const users = usersOf(entry);
    if (users.length > 0) throw new HangarError('cache_in_use', [entry.model_version, users.join(', ')], { param: 'model_version' });
    await registry.cache.remove(entry);
    request.log.info({ model_version: entry.model_version, bytes: entry.size }, 'deleted a cached model');
    return { result: true };
  });
};

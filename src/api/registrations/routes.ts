import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { needs } from '../auth/route-permission.js';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { isModelType, type EngineTable, type Registry } from '../../registry/index.js';
import type { Supervisor } from '../../supervisor/supervisor.js';
import { HangarError } from '../../errors/hangar-error.js';
import { engineParams, listQuery, registerBody, typeNameParams, typeParams } from './schema.js';
import { codePower } from '../auth/code-power.js';

/** Launchable models: built-in catalog and custom registrations (contract §2). */
export const registrationRoutes: FastifyPluginAsync<{ registry: Registry; supervisor: Supervisor }> = async (fastify, { registry, supervisor }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const tags = ['registrations'];

  app.get('/v1/model_registrations/:model_type', { ...needs('models:list'), schema: { params: typeParams, querystring: listQuery, tags } }, async (request) =>
    registry.list(request.params.model_type, { detailed: request.query.detailed }),
  );

  app.get('/v1/model_registrations/:model_type/:model_name', { ...needs('models:list'), schema: { params: typeNameParams, tags } }, async (request) =>
    registry.get(request.params.model_type, request.params.model_name),
  );

  app.post('/v1/model_registrations/:model_type', { ...needs('models:register'), schema: { params: typeParams, body: registerBody, tags } }, async (request) => {
    const owner = request.principal?.username ?? null;
    await registry.register(request.params.model_type, { model: request.body.model }, request.body.persist, codePower(request, 'model.register.code', request.params.model_type), owner);
    return null;
  });

  /** One user may not remove, or replace, another's registration (admin may). */
  const requireOwner = (request: FastifyRequest, name: string, owner: string | null): void => {
    const principal = request.principal;
    if (principal && !principal.scopes.has('admin') && owner !== principal.username) {
      throw new HangarError('registration_not_owner', [name], { param: 'model_name' });
    }
  };

  // Ours: an edit in one step. The web UI's edit was an unregister and a register, which
  // lost the registration when the new one was refused and the old one no longer passed.
  app.put('/v1/model_registrations/:model_type/:model_name', { ...needs('models:register'), schema: { params: typeNameParams, body: registerBody, tags } }, async (request) => {
    const { model_type: type, model_name: name } = request.params;
    await registry.replace(type, name, { model: request.body.model }, request.body.persist, codePower(request, 'model.register.code', type), (owner) => requireOwner(request, name, owner));
    return null;
  });

  app.delete('/v1/model_registrations/:model_type/:model_name', { ...needs('models:unregister'), schema: { params: typeNameParams, tags } }, async (request) => {
    const { model_type: type, model_name: name } = request.params;
    await registry.unregister(type, name, (owner) => {
      // What a running or saved model depends on is not pulled from under it.
      requireOwner(request, name, owner);
      const users = supervisor.instancesUsing(type, name);
      if (users.length > 0) throw new HangarError('registration_in_use', [name, users.join(', ')], { param: 'model_name' });
    });
    return null;
  });

  // Unknown names answer 200 null, as Xinference does: the UI probes engines for any name.
  app.get('/v1/engines/:model_name', { ...needs('models:list'), schema: { params: engineParams, tags } }, async (request) =>
    withEstimates(supervisor, 'LLM', registry.engines('LLM', request.params.model_name)),
  );

  app.get('/v1/engines/:model_type/:model_name', { ...needs('models:list'), schema: { params: typeNameParams, tags } }, async (request) =>
    withEstimates(supervisor, request.params.model_type, registry.engines(request.params.model_type, request.params.model_name)),
  );
};

/**
 * Each engine entry with its memory estimate (docs/on-demand.md, "Memory estimate"):
 * `memory_estimate` in bytes per replica on CPU (an entry with quantizations: its
 * first's, and `memory_estimates` by quantization); null where nothing gives the size.
 */
async function withEstimates(supervisor: Supervisor, type: string, table: EngineTable | null): Promise<EngineTable | null> {
  if (!table || !isModelType(type)) return table;
  for (const [engine, entries] of Object.entries(table)) {
    if (typeof entries === 'string') continue;
    for (const entry of entries) {
      const size = entry.model_size_in_billions as number | string | undefined;
      const estimate = (quantization: string | undefined) =>
        supervisor.estimate({
          model_type: type,
          model_name: entry.model_name,
          model_engine: engine,
          model_format: typeof entry.model_format === 'string' ? entry.model_format : undefined,
          model_size_in_billions: size ?? undefined,
          quantization,
        });
      // Models without quantizations (most non-LLM types) get the one figure.
      if (!Array.isArray(entry.quantizations)) {
        entry.memory_estimate = await estimate(undefined);
        continue;
      }
      const estimates: Record<string, number | null> = {};
      for (const quantization of entry.quantizations as string[]) estimates[quantization] = await estimate(quantization);
      entry.memory_estimates = estimates;
      entry.memory_estimate = Object.values(estimates)[0] ?? null;
    }
  }
  return table;
}

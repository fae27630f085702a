import type { FastifyPluginAsync } from 'fastify';
import type { Supervisor } from '../../supervisor/supervisor.js';
import { needs } from '../auth/route-permission.js';
import { keyAllowsModel } from '../auth/key-admission.js';

/**
 * `GET /v1/memory` (a Hangar extension, docs/on-demand.md): each device's memory
 * budget, what the models hold of it (the larger of each one's estimate and its
 * measured resident memory) and what is free, for the CLI's `hangar ps` and the web UI.
 */
export const memoryRoutes: FastifyPluginAsync<{ supervisor: Supervisor }> = async (app, { supervisor }) => {
  // A key limited to some models sees only those among each device's holders, as in
  // GET /v1/models (docs/auth.md); the device's totals stay whole.
  app.get('/v1/memory', { ...needs('models:list'), schema: { tags: ['models'] } }, async (request) => ({
    devices: supervisor.memoryUse().map((d) => ({
      ...d,
      budget_bytes: Number.isFinite(d.budget_bytes) ? d.budget_bytes : null,
      models: d.models.filter((m) => keyAllowsModel(request, m.model_uid)),
    })),
  }));
};

import type { FastifyPluginAsync } from 'fastify';
import type { Supervisor } from '../../supervisor/supervisor.js';
import { needs } from '../auth/route-permission.js';

/**
 * `GET /v1/memory` (a Hangar extension, docs/on-demand.md): each device's memory
 * budget, what the models hold of it (the larger of each one's estimate and its
 * measured resident memory) and what is free, for the CLI's `hangar ps` and the web UI.
 */
export const memoryRoutes: FastifyPluginAsync<{ supervisor: Supervisor }> = async (app, { supervisor }) => {
  app.get('/v1/memory', { ...needs('models:list'), schema: { tags: ['models'] } }, async () => ({
    devices: supervisor.memoryUse().map((d) => ({ ...d, budget_bytes: Number.isFinite(d.budget_bytes) ? d.budget_bytes : null })),
  }));
};

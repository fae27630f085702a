import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Registry } from '../../registry/index.js';
import type { Supervisor } from '../../supervisor/supervisor.js';
import { needs } from '../auth/route-permission.js';
import { refuseUnkeptRegistration } from './kept-entry.js';
import { listedLaunch } from './launch-listing.js';
import { toLaunchRequest } from './launch-request.js';
import { launchBody } from './schema.js';
import { codePower } from '../auth/code-power.js';

const uidQuery = z.object({ model_uid: z.string({ error: (issue) => (issue.input === undefined ? 'is required: the uid (or name) the model autostarts as' : undefined) }).min(1).max(256) });

/** Models launched at every start (Xinference 2.12's autostart; docs/requests.md, "Autostart"). */
export const autostartRoutes: FastifyPluginAsync<{ supervisor: Supervisor; registry: Registry }> = async (fastify, { supervisor, registry }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const tags = ['models'];

  app.get('/v1/autostart/models', { ...needs('models:list'), schema: { tags } }, async () => ({
    list: supervisor.saved.autostartEntries().map(({ uid, request }) => ({ ...listedLaunch(request), model_uid: uid })),
  }));

  // The body of POST /v1/models; checked as a launch is, then kept (launched at the next start, not now).
  app.post('/v1/autostart/models', { ...needs('models:start'), schema: { body: launchBody, tags } }, async (request) => {
    await refuseUnkeptRegistration(registry, request.body, 'autostart');
    return { model_uid: await supervisor.saved.addAutostart(toLaunchRequest(request.body), codePower(request, 'model.autostart.code', request.body.model_uid ?? request.body.model_name)) };
  });

  app.delete('/v1/autostart/models', { ...needs('models:stop'), schema: { querystring: uidQuery, tags } }, async (request) => {
    await supervisor.saved.removeAutostart(request.query.model_uid);
    return { result: true };
  });

  // Xinference 2.12's spellings, which its client (remove_autostart_model,
  // get_autostart_model_summary) calls: the uid in the path, answered with the summary.
  const summary = () => ({ models: supervisor.saved.autostartEntries().map(({ uid }) => ({ enabled: true, model_uid: uid })) });

  app.get('/v1/autostart/models/summary', { ...needs('models:list'), schema: { tags } }, async () => summary());

  app.delete('/v1/autostart/models/:model_uid', { ...needs('models:stop'), schema: { params: uidQuery, tags } }, async (request) => {
    await supervisor.saved.removeAutostart(request.params.model_uid);
    return summary();
  });
};

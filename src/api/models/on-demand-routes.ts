import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { keepAliveText } from '../../config/keep-alive.js';
import type { LaunchRequest } from '../../supervisor/launch-request.js';
import type { Registry } from '../../registry/index.js';
import type { Supervisor } from '../../supervisor/supervisor.js';
import { codePower } from '../auth/code-power.js';
import { needs } from '../auth/route-permission.js';
import { hubLaunchBody, hubLaunchUid } from './hub-launch.js';
import { refuseUnkeptRegistration } from './kept-entry.js';
import { listedLaunch } from './launch-listing.js';
import { toLaunchRequest } from './launch-request.js';
import { launchBody, uidParams } from './schema.js';

/**
 * Models loaded when a request names them (docs/on-demand.md): launch defaults kept in
 * `<home>/state/on-demand.json`, guarded like launching and terminating.
 */
export const onDemandRoutes: FastifyPluginAsync<{ supervisor: Supervisor; registry: Registry }> = async (fastify, { supervisor, registry }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const tags = ['models'];

  app.get('/v1/on_demand/models', { ...needs('models:list'), schema: { tags } }, async () => ({
    enabled: supervisor.onDemand.enabled,
    list: supervisor.onDemand.entries().map(({ uid, request }) => entryRecord(supervisor, uid, request)),
  }));

  // The body of POST /v1/models, checked as a launch is (engine, spec, GPUs, code risks), then kept.
  // A hub id is registered from the hub now, as a launch registers it (hub-launch.ts).
  app.post('/v1/on_demand/models', { ...needs('models:start'), schema: { body: launchBody, tags } }, async (request) => {
    const uid = hubLaunchUid(request.body) ?? request.body.model_uid ?? request.body.model_name;
    const body = { ...(await hubLaunchBody(request.body, registry, request)), model_uid: uid };
    await refuseUnkeptRegistration(registry, body, 'on-demand');
    return { model_uid: await supervisor.addOnDemand(toLaunchRequest(body), codePower(request, 'model.on_demand.code', uid)) };
  });

  app.delete('/v1/on_demand/models/:model_uid', { ...needs('models:stop'), schema: { params: uidParams, tags } }, async (request) => {
    await supervisor.onDemand.remove(request.params.model_uid);
    return { result: true };
  });
};

/** An entry as listed: its launch (envs' values hidden), whether it is loaded now, and its keep_alive. */
function entryRecord(supervisor: Supervisor, uid: string, request: LaunchRequest): Record<string, unknown> {
  const instance = supervisor.listInstances({ model_uid: uid }).find((i) => i.isActive);
  const keepAlive = request.keep_alive !== undefined ? request.keep_alive : supervisor.onDemand.settings.keepAliveMs;
  return {
    ...listedLaunch(request),
    model_uid: uid,
    keep_alive: keepAliveText(keepAlive),
    status: instance ? instance.state : 'UNLOADED',
  };
}

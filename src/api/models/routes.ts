import type { FastifyPluginAsync } from 'fastify';
import { needs } from '../auth/route-permission.js';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Supervisor } from '../../supervisor/supervisor.js';
import { toLaunchRequest, withPreferredHub } from './launch-request.js';
import type { ModelSource } from '../../config/model-source.js';
import { hubLaunchBody, hubLaunchUid } from './hub-launch.js';
import type { Registry } from '../../registry/index.js';
import { fieldsOfVersion, instancesQuery, launchBody, launchByVersionBody, launchQuery, replicaParams, uidParams } from './schema.js';
import { codePower } from '../auth/code-power.js';
import { describeUnrestored, unrestoredInstanceRecord } from '../../supervisor/unrestored-instances.js';
import { describePreparing, preparingInstanceRecord } from '../../supervisor/preparing-launches.js';
import { adapterItems } from '../llm/lora-model-id.js';
import { describeOnDemand } from './on-demand-record.js';
import { anthropicModel, anthropicModelList, isAnthropicClient } from '../anthropic/model-list.js';
import { keyAllowsModel, requireKeyModel } from '../auth/key-admission.js';

/** Running models (contract §3). Routes stay thin: the supervisor owns the lifecycle. */
export const modelRoutes: FastifyPluginAsync<{ supervisor: Supervisor; registry: Registry; modelSource: ModelSource }> = async (fastify, { supervisor, registry, modelSource }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();

  app.post('/v1/models', { ...needs('models:start'), schema: { body: launchBody, querystring: launchQuery, tags: ['models'] } }, async (request) => {
    // A hub id (`hf.co/<org>/<repo>[:<tag>]`) is registered from the hub first (docs/registry.md,
    // "Launch by hub id"); meanwhile its uid reads as CREATING and a cancel or terminate stops it.
    const hubUid = hubLaunchUid(request.body);
    const asked = request.body;
    const body = hubUid === null
      ? asked
      : await supervisor.preparing.run(
        { uid: hubUid, modelName: asked.model_name, modelType: asked.model_type, modelEngine: asked.model_engine ?? null, replica: asked.replica },
        () => hubLaunchBody(asked, registry, request),
      );
    const uid = await supervisor.launch(await withPreferredHub(toLaunchRequest(body), modelSource), request.query.wait_ready, codePower(request, 'model.launch.code', body.model_uid ?? body.model_name));
    return { model_uid: uid };
  });

  app.post('/v1/models/instance', { ...needs('models:start'), schema: { body: launchByVersionBody, querystring: launchQuery, tags: ['models'] } }, async (request) => {
    const { model_version: version, ...rest } = request.body;
    const body = launchBody.parse({ ...rest, ...fieldsOfVersion(rest.model_type, version) });
    const uid = await supervisor.launch(await withPreferredHub(toLaunchRequest(body), modelSource), request.query.wait_ready, codePower(request, 'model.launch.code', body.model_uid ?? body.model_name));
    return { model_uid: uid };
  });

  // Saved models that did not come back at start are listed too, in ERROR with the reason.
  // A key limited to some models (model_permissions) lists only those, as LiteLLM's
  // virtual keys do: a client that offers every listed model would offer ones the key
  // cannot call (docs/auth.md).
  app.get('/v1/models', { ...needs('models:list'), schema: { tags: ['models'] } }, async (request) => {
    const allowed = (uid: string) => keyAllowsModel(request, uid);
    if (isAnthropicClient(request)) return anthropicModelList(supervisor, allowed);
    return {
      object: 'list',
      data: [
        // Each LoRA adapter is listed after its model as a model of its own (vLLM's way).
        ...supervisor.listReady().filter((i) => allowed(i.uid)).flatMap((i) => {
          const described = i.describe();
          return [described, ...adapterItems(described)];
        }),
        // Saved ones that could not come back (a launching one, waiting its turn at start, is not listed yet).
        ...supervisor.saved.listUnrestored({ includeErrorRecords: true }).filter((e) => !e.waiting && allowed(e.uid)).map(describeUnrestored),
        // On-demand entries not READY now: available, loaded by the first request that names
        // them (or loading, or unloading, which is said in `status`).
        ...supervisor.onDemandNotReady().filter(({ entry }) => allowed(entry.uid)).map(({ entry, status }) => describeOnDemand(entry, status)),
      ],
    };
  });

  // Registered before /v1/models/:model_uid; find-my-way prefers the static segment anyway.
  app.get('/v1/models/instances', { ...needs('models:list'), schema: { querystring: instancesQuery, tags: ['models'] } }, async (request) => {
    const { model_uid: uid, model_name: name } = request.query;
    const saved = supervisor.saved
      .listUnrestored({ includeErrorRecords: false })
      .filter((e) => (uid ? e.uid === uid : name ? e.request.model_name === name : true));
    const preparing = supervisor.preparing.list().filter((e) => !supervisor.has(e.uid) && (uid ? e.uid === uid : name ? e.modelName === name : true));
    const allowed = (u: string) => keyAllowsModel(request, u);
    return [
      ...supervisor.listInstances(request.query).filter((i) => allowed(i.uid)).map((i) => i.toInstanceRecord()),
      ...saved.filter((e) => allowed(e.uid)).map(unrestoredInstanceRecord),
      ...preparing.filter((e) => allowed(e.uid)).map(preparingInstanceRecord),
    ];
  });

  app.get('/v1/models/:model_uid', { ...needs('models:list'), schema: { params: uidParams, tags: ['models'] } }, async (request) => {
    requireKeyModel(request, request.params.model_uid);
    if (isAnthropicClient(request)) return anthropicModel(supervisor, request.params.model_uid);
    const saved = supervisor.unrestoredOnly(request.params.model_uid);
    if (saved) return describeUnrestored(saved);
    const preparing = supervisor.preparingOnly(request.params.model_uid);
    if (preparing) return describePreparing(preparing);
    const entry = supervisor.onDemandUnloaded().find((e) => e.uid === request.params.model_uid);
    if (entry) return describeOnDemand(entry);
    const instance = supervisor.require(request.params.model_uid);
    return instance.describe();
  });

  // A saved model whose restore failed (docs/requests.md, "Restore after a restart"), once repaired.
  app.post('/v1/models/:model_uid/restore', { ...needs('models:start'), schema: { params: uidParams, tags: ['models'] } }, async (request) => {
    const uid = request.params.model_uid;
    // A registration file repaired on disk is read again first: that may be the repair.
    await registry.loadRepaired();
    return { model_uid: await supervisor.saved.restoreSaved(uid, codePower(request, 'model.launch.code', uid)) };
  });

  app.delete('/v1/models/:model_uid', { ...needs('models:stop'), schema: { params: uidParams, tags: ['models'] } }, async (request) => {
    await supervisor.terminate(request.params.model_uid);
    return null;
  });

  // models:read routes about one model: a key limited to other models (model_permissions) is refused, as for inference.
  app.get('/v1/models/:model_uid/progress', { ...needs('models:read'), schema: { params: uidParams, tags: ['models'] } }, async (request) => {
    requireKeyModel(request, request.params.model_uid);
    // A uid that is not launching or running: 0, never an error (Xinference 2.0; its
    // client's get_launch_model_progress raised on the 404 this was until 2026-11-29).
    const uid = request.params.model_uid;
    return { progress: supervisor.has(uid) ? supervisor.require(uid).progress : 0 };
  });

  app.post('/v1/models/:model_uid/cancel', { ...needs('models:stop'), schema: { params: uidParams, tags: ['models'] } }, async (request) => {
    await supervisor.cancel(request.params.model_uid);
    return null;
  });

  app.get('/v1/models/:model_uid/replicas', { ...needs('models:list'), schema: { params: uidParams, tags: ['models'] } }, async (request) => {
    requireKeyModel(request, request.params.model_uid);
    return supervisor.require(request.params.model_uid).replicas.map((r) => r.toRecord());
  });

  // Scaling a running model (Xinference 2.12, docs/requests.md): one replica more, or one fewer.
  app.post('/v1/models/:model_uid/replicas', { ...needs('models:start'), schema: { params: uidParams, tags: ['models'] } }, async (request) =>
    (await supervisor.addReplica(request.params.model_uid, codePower(request, 'model.launch.code', request.params.model_uid))).toRecord(),
  );

  app.delete('/v1/models/:model_uid/replicas/:replica_id', { ...needs('models:stop'), schema: { params: replicaParams, tags: ['models'] } }, async (request) => {
    await supervisor.removeReplica(request.params.model_uid, request.params.replica_id);
    // `remaining_replicas` is what Xinference's client (2.9+, terminate_model_replica) reads.
    // The drain may outlast the model (terminated meanwhile): then none remain.
    return { result: true, remaining_replicas: supervisor.has(request.params.model_uid) ? supervisor.require(request.params.model_uid).replicas.length : 0 };
  });

  // An on-demand entry keeps its events across loads and unloads, so they are there when it is not loaded.
  app.get('/v1/models/:model_uid/events', { ...needs('models:read'), schema: { params: uidParams, tags: ['models'] } }, async (request) => {
    const uid = request.params.model_uid;
    requireKeyModel(request, uid);
    const events = supervisor.has(uid) ? supervisor.require(uid).events : supervisor.onDemand.eventsOf(uid);
    return (events ?? supervisor.require(uid).events).list();
  });
};

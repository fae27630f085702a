import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { HangarError } from '../../errors/hangar-error.js';
import type { Supervisor } from '../../supervisor/supervisor.js';
import { requireKeyModel } from '../auth/key-admission.js';
import { ownerOf } from '../auth/request-owner.js';
import { needs } from '../auth/route-permission.js';

const abortParams = z.object({ model_uid: z.string().min(1), request_id: z.string().min(1).max(256) });
// Xinference's: how long the id stays blocked after the abort (XINFERENCE_DEFAULT_CANCEL_BLOCK_DURATION, 30 s).
const abortBody = z.object({ block_duration: z.number().min(0).max(86_400).nullish() }).nullish();
const DEFAULT_BLOCK_SECONDS = 30;
const progressParams = z.object({ request_id: z.string().min(1).max(256) });

/**
 * Request control (Xinference 2.x, docs/requests.md): abort one inference request by
 * the id every answer carries in `x-request-id` (or the `request_id` the client gave),
 * and read its progress. Only the user who sent a request reaches it (request-tracking.ts),
 * and a key limited to other models may not abort calls of this one.
 */
export const requestRoutes: FastifyPluginAsync<{ supervisor: Supervisor }> = async (fastify, { supervisor }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const tags = ['inference'];

  app.post('/v1/models/:model_uid/requests/:request_id/abort', { ...needs('models:read'), schema: { params: abortParams, body: abortBody, tags } }, async (request) => {
    const { model_uid: uid, request_id: id } = request.params;
    requireKeyModel(request, uid);
    // A model that is not running: Xinference's NO_OP (its client raises on an error;
    // until 2026-11-29 this was a 404).
    if (!supervisor.has(uid)) return { msg: 'NO_OP' };
    const msg = request.server.inflight.abort(ownerOf(request), uid, id, request.body?.block_duration ?? DEFAULT_BLOCK_SECONDS);
    if (msg === 'DONE') request.log.info({ model_uid: uid, aborted_request: id }, 'request aborted through the API');
    return { msg };
  });

  app.get('/v1/requests/:request_id/progress', { ...needs('models:read'), schema: { params: progressParams, tags } }, async (request) => {
    const progress = request.server.inflight.progress(ownerOf(request), request.params.request_id);
    if (progress === null) throw new HangarError('request_not_found', [request.params.request_id], { param: 'request_id' });
    return { progress };
  });
};

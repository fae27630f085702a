import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { parseKeepAlive } from '../config/keep-alive.js';
import { HangarError } from '../errors/hangar-error.js';
import { refuseOtherType } from '../supervisor/replica-calls.js';
import type { Supervisor } from '../supervisor/supervisor.js';
import { inferenceBody } from './inference-body.js';
import { whenRequestDone } from './request-done.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set once the request holds its model (model-lease.ts). */
    leased: boolean;
  }
}

/**
 * Every inference request holds its model from when it names it until its answer is
 * done (docs/on-demand.md): an on-demand entry that is not running is loaded first,
 * and no model is unloaded (idle, or evicted for memory) while a request holds it.
 * JSON routes are held here, after key admission (a key that may not use the model
 * never loads it); upload routes call `leaseModel` when their form is read.
 */
export function installModelLeases(app: FastifyInstance, supervisor: Supervisor): void {
  app.decorateRequest('leased', false);
  app.addHook('preHandler', async (request, reply) => {
    const body = inferenceBody(request);
    if (!body) return;
    await leaseModel(request, reply, body.model, body);
  });
  app.decorate('modelLeases', supervisor);
}

declare module 'fastify' {
  interface FastifyInstance {
    modelLeases: Supervisor;
  }
}

/**
 * Holds `model` for the rest of the request; its `keep_alive` (Ollama's per-request
 * field, taken out of the body so no engine sees it) becomes the model's if it was
 * loaded on demand. A uid no model or entry answers to is left to the route's own 404.
 */
export async function leaseModel(request: FastifyRequest, reply: FastifyReply, model: string, fields?: Record<string, unknown>): Promise<void> {
  const supervisor = request.server.modelLeases;
  if (request.leased || !supervisor.serves(model)) return;
  // Refused before an on-demand entry loads, not after the load it did not need.
  const types = request.routeOptions.config.modelTypes;
  const unloaded = supervisor.onDemand.unloadedType(model);
  if (types && unloaded) refuseOtherType(model, unloaded, request.routeOptions.url ?? request.url, types);
  const need = request.routeOptions.config.llmAbility;
  if (need && unloaded === 'LLM') {
    const abilities = supervisor.onDemand.unloadedAbilities(model);
    if (abilities && !abilities.includes(need.ability)) throw new HangarError('ability_missing', [model, need.what, abilities.join(', ')], { param: 'model' });
  }
  let keepAlive: number | null | undefined;
  if (fields && fields.keep_alive !== undefined) {
    const given = fields.keep_alive;
    delete fields.keep_alive;
    if (given !== null) {
      try {
        keepAlive = parseKeepAlive(given);
      } catch (err) {
        throw new HangarError('invalid_field', [(err as Error).message], { param: 'keep_alive' });
      }
    }
  }
  const lease = await supervisor.acquire(model);
  request.leased = true;
  // Only a model loaded on demand takes a request's keep_alive: a hand-launched model
  // stays as its launcher set it (a key that may call a model may not stop it).
  if (!lease.instance.onDemand) keepAlive = undefined;
  // The answer is done, or the client went away (mid-stream, or with its answer queued).
  if (reply.raw.writableFinished) lease.release(keepAlive);
  else whenRequestDone(reply, () => lease.release(keepAlive));
}

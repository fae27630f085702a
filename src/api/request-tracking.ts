import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HangarError } from '../errors/hangar-error.js';
import { inferenceBody, wantedTokens } from './inference-body.js';

/** One inference request in flight: what `POST .../requests/{id}/abort` and `GET /v1/requests/{id}/progress` reach. */
export interface TrackedRequest {
  /** The model uid the request named. */
  readonly model: string;
  readonly controller: AbortController;
  /** Set when the abort came through the API (not a client that went away). */
  abortedByApi: boolean;
  /** 0 to 1; generation reports tokens out of `max_tokens` when it has one. */
  progress: number;
  readonly maxTokens: number | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set on inference requests (POST, `models:read`, a `model` in the body). */
    tracking: TrackedRequest | null;
  }
  interface FastifyInstance {
    inflight: InflightRequests;
  }
}

const FINISHED_KEPT = 1000;

/**
 * Inference requests in flight by id: the request's own id (`x-request-id`, echoed on
 * every answer) and, when the client gave one, the `request_id` of its body or of its
 * `generate_config` (Xinference's clients' habit). Finished ids are remembered a while
 * (the last 1,000) so a progress poll after the end reads 1.0 rather than an error.
 */
export class InflightRequests {
  private readonly live = new Map<string, TrackedRequest>();
  private readonly finished = new Map<string, string>();

  track(ids: readonly string[], entry: TrackedRequest): () => void {
    for (const id of ids) this.live.set(id, entry);
    return () => {
      for (const id of ids) {
        if (this.live.get(id) !== entry) continue;
        this.live.delete(id);
        this.finished.set(id, entry.model);
        if (this.finished.size > FINISHED_KEPT) this.finished.delete(this.finished.keys().next().value!);
      }
    };
  }

  /** `DONE` when a request of that model was in flight and is now aborted; `NOT_FOUND` otherwise (Xinference's answers). */
  abort(model: string, id: string): 'DONE' | 'NOT_FOUND' {
    const entry = this.live.get(id);
    if (!entry || entry.model !== model) return 'NOT_FOUND';
    entry.abortedByApi = true;
    entry.controller.abort();
    return 'DONE';
  }

  /** Progress of a request in flight (or 1 once finished); null for an id never seen. */
  progress(id: string): number | null {
    const entry = this.live.get(id);
    if (entry) return entry.progress;
    return this.finished.has(id) ? 1 : null;
  }
}

/** The ids a request is known by: its own, and the client's `request_id` if it gave one. */
function idsOf(request: FastifyRequest, body: Record<string, unknown>): string[] {
  const ids = [String(request.id)];
  const config = body.generate_config as Record<string, unknown> | null | undefined;
  for (const given of [body.request_id, config?.request_id]) {
    if (typeof given === 'string' && given.length > 0 && given.length <= 256 && !ids.includes(given)) ids.push(given);
  }
  return ids;
}

export function installRequestTracking(app: FastifyInstance): void {
  app.decorate('inflight', new InflightRequests());
  app.decorateRequest('tracking', null);
  app.addHook('preHandler', (request, reply, done) => {
    const body = inferenceBody(request);
    if (!body) return done();
    const entry: TrackedRequest = { model: body.model, controller: new AbortController(), abortedByApi: false, progress: 0, maxTokens: wantedTokens(body) };
    request.tracking = entry;
    const untrack = app.inflight.track(idsOf(request, body), entry);
    reply.raw.on('close', untrack);
    done();
  });
}

/** What a request aborted through the API answers (non-stream) or ends its stream with. */
export function abortedError(request: FastifyRequest): HangarError | null {
  return request.tracking?.abortedByApi ? new HangarError('request_aborted', [String(request.id)]) : null;
}

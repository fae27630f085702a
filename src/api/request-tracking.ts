import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HangarError } from '../errors/hangar-error.js';
import { ownerOf } from './auth/request-owner.js';
import { inferenceBody, wantedTokens } from './inference-body.js';
import { whenRequestDone } from './request-done.js';

/** One inference request in flight: what `POST .../requests/{id}/abort` and `GET /v1/requests/{id}/progress` reach. */
export interface TrackedRequest {
  /** The model uid the request named. */
  readonly model: string;
  /** The user it came as ('' while auth is off): only they reach it by id. */
  readonly owner: string;
  readonly controller: AbortController;
  /** Set when the abort came through the API (not a client that went away). */
  abortedByApi: boolean;
  /** The id the abort named (the client's own `request_id`, or ours). */
  abortedAs: string | null;
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
/** Ids blocked after an abort, at most (InflightRequests.block says which go past it). */
const BLOCKED_KEPT = 10_000;
/** Blocks of one owner past which their own go first. */
const BLOCKED_PER_OWNER = 1_000;

/**
 * Inference requests in flight by id: the request's own id (`x-request-id`, echoed on
 * every answer) and, when the client gave one, the `request_id` of its body or of its
 * `generate_config` (Xinference's clients' habit). Finished ids are remembered a while
 * (the last 1,000) so a progress poll after the end reads 1.0 rather than an error.
 *
 * Each user reaches only their own requests (docs/auth.md): ids chosen by clients
 * ("job-42") are easy to guess, and one user aborting another's calls was a denial of
 * service across users. Two users may use the same `request_id` without meeting.
 */
export class InflightRequests {
  private readonly live = new Map<string, TrackedRequest>();
  private readonly finished = new Set<string>();
  /** Aborted ids, whose, and until when (ms) a new request may not use them: Xinference's `block_duration`. */
  private readonly blocked = new Map<string, { owner: string; until: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  /** The first of `ids` an abort has blocked for this owner, and the seconds left; null when none is. */
  blockedId(owner: string, ids: readonly string[]): { id: string; seconds: number } | null {
    // Every inference request asks: with nothing blocked (the usual case) that is all.
    if (this.blocked.size === 0) return null;
    const now = this.now();
    for (const id of ids) {
      const key = keyOf(owner, id);
      const until = this.blocked.get(key)?.until;
      if (until === undefined) continue;
      if (until > now) return { id, seconds: Math.ceil((until - now) / 1000) };
      this.blocked.delete(key);
    }
    return null;
  }

  track(ids: readonly string[], entry: TrackedRequest): () => void {
    const keys = ids.map((id) => keyOf(entry.owner, id));
    for (const key of keys) this.live.set(key, entry);
    return () => {
      for (const key of keys) {
        if (this.live.get(key) !== entry) continue;
        this.live.delete(key);
        this.finished.add(key);
        if (this.finished.size > FINISHED_KEPT) this.finished.delete(this.finished.values().next().value!);
      }
    };
  }

  /**
   * `DONE` when the owner's request of that model was in flight and is now aborted;
   * `NOT_FOUND` otherwise (Xinference's answers). Either way the id is then blocked
   * for `blockSeconds` (Xinference's `block_duration`, 30 s unless given): a request
   * sent with it meanwhile is refused, so an abort that overtakes its request, or a
   * client's retry, does not let it run.
   */
  abort(owner: string, model: string, id: string, blockSeconds = 0): 'DONE' | 'NOT_FOUND' {
    if (blockSeconds > 0) this.block(owner, id, blockSeconds);
    const entry = this.live.get(keyOf(owner, id));
    if (!entry || entry.model !== model) return 'NOT_FOUND';
    entry.abortedByApi = true;
    entry.abortedAs ??= id;
    entry.controller.abort();
    return 'DONE';
  }

  /**
   * Blocks the owner's id. Past the cap, ended blocks go first; then the owner's own
   * oldest (one owner past its share), and only then anyone's oldest, so a user cannot
   * push another's blocks out by aborting made-up ids.
   */
  private block(owner: string, id: string, seconds: number): void {
    const key = keyOf(owner, id);
    this.blocked.delete(key); // re-inserted as the newest
    this.blocked.set(key, { owner, until: this.now() + seconds * 1000 });
    if (this.blocked.size <= BLOCKED_KEPT) return;
    const now = this.now();
    for (const [k, b] of this.blocked) if (b.until <= now) this.blocked.delete(k);
    if (this.blocked.size <= BLOCKED_KEPT) return;
    let own = 0;
    let ownOldest: string | undefined;
    for (const [k, b] of this.blocked) {
      if (b.owner !== owner) continue;
      own++;
      ownOldest ??= k;
    }
    this.blocked.delete(own > BLOCKED_PER_OWNER ? ownOldest! : this.blocked.keys().next().value!);
  }

  /** Progress of the owner's request in flight (or 1 once finished); null for an id never seen. */
  progress(owner: string, id: string): number | null {
    const key = keyOf(owner, id);
    const entry = this.live.get(key);
    if (entry) return entry.progress;
    return this.finished.has(key) ? 1 : null;
  }
}

/** Owner and id as one key that no other pair spells. */
const keyOf = (owner: string, id: string): string => JSON.stringify([owner, id]);

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
    const owner = ownerOf(request);
    const ids = idsOf(request, body);
    const blocked = app.inflight.blockedId(owner, ids);
    if (blocked) return done(new HangarError('request_blocked', [blocked.id, blocked.seconds], { param: 'request_id' }));
    const entry: TrackedRequest = { model: body.model, owner, controller: new AbortController(), abortedByApi: false, abortedAs: null, progress: 0, maxTokens: wantedTokens(body) };
    request.tracking = entry;
    const untrack = app.inflight.track(ids, entry);
    whenRequestDone(reply, untrack);
    done();
  });
}

/** What a request aborted through the API answers (non-stream) or ends its stream with: it names the id the abort named. */
export function abortedError(request: FastifyRequest): HangarError | null {
  const tracking = request.tracking;
  return tracking?.abortedByApi ? new HangarError('request_aborted', [tracking.abortedAs ?? String(request.id)]) : null;
}

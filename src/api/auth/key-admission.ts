import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AccessControl } from '../../auth/access-control.js';
import { isRefusal, type Ticket } from '../../auth/rate-limiter.js';
import { HangarError } from '../../errors/hangar-error.js';
import { inferenceBody, wantedTokens } from '../inference-body.js';
import { finishReasonOf, type FinishReason } from '../stats/finish-reason.js';
import type { InferenceOutcome } from '../stats/model-series.js';
import { whenRequestDone } from '../request-done.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set when a database API key made an inference request: its limits and usage. */
    meter: KeyMeter | null;
  }
}

/** The usage ledger's key id for requests without a database key (ids of real keys start at 1). */
export const ANONYMOUS_KEY_ID = 0;

/** An anonymous request's ticket: no limit to charge against, no slot to give back. */
const UNLIMITED: Ticket = { headers: {}, charge: () => true, release: () => {} };

/** Turns a request's model (a uid) into the name it was launched from; null when no such instance runs. */
export type ModelLookup = (uid: string) => string | null;

interface UsageValue {
  // Chat's names, or the Responses and Messages APIs' (input_tokens, output_tokens).
  usage?: { prompt_tokens?: unknown; completion_tokens?: unknown; total_tokens?: unknown; input_tokens?: unknown; output_tokens?: unknown } | null;
  text?: unknown;
  reasoning_content?: unknown;
}

/**
 * One inference request's account: the limiter's ticket, the tokens charged as they
 * come, and, when the response has gone, one usage record, the slot given back and
 * the request's outcome in its model's series (docs/monitoring.md).
 */
export class KeyMeter {
  private promptTokens = 0;
  private completionTokens = 0;
  private streamedTokens = 0;
  /** When the first text of a stream was relayed (performance.now()); null before, and for non-streams. */
  private firstTextAt: number | null = null;
  private finishReason: FinishReason | null = null;
  /** Every token charged to the key so far (streamed one by one, then settled). */
  private charged = 0;
  /** Usage reports seen: one per choice (n > 1 streams report one per choice). */
  private settlements = 0;
  private failed = false;

  constructor(
    private readonly access: AccessControl,
    private readonly request: FastifyRequest,
    readonly keyId: number,
    /** The model as counted: a running uid, or `(unknown)`. */
    readonly model: string,
    private readonly ticket: Ticket,
  ) {}

  /**
   * Sees a stream's chunks as they are relayed: each text-bearing chunk is a token,
   * charged at once; the usage of the last chunk settles the exact count. Throws
   * `key_rate_limited` once the key is over its tokens per minute, which ends the
   * stream with that error as its last event. `countsPrompt`: as for settle().
   */
  observe(values: readonly unknown[], countsPrompt: boolean): void {
    const before = this.streamedTokens;
    try {
      for (const value of values) {
        const v = value as UsageValue | null;
        if (v?.usage) {
          this.settle(v, countsPrompt);
          continue;
        }
        if (!v?.text && !v?.reasoning_content) continue;
        this.firstTextAt ??= performance.now();
        this.streamedTokens++;
        this.charged++;
        if (!this.ticket.charge(1)) {
          this.request.server.metrics.keys.limited(this.keyId, 'tokens');
          throw new HangarError('key_rate_limited', ['tokens', 'the stream ran over the tokens per minute of this API key and was stopped']);
        }
      }
    } finally {
      // Once per relayed step, not per token: the model's live tokens per second.
      const tokens = this.streamedTokens - before;
      if (tokens > 0) this.request.server.modelStats.generated(this.model, tokens);
    }
  }

  /**
   * A usage report: a whole answer's (non-stream) or a stream's last chunk's, one per
   * choice. Completions add up; the prompt counts once, or, for the choices of a list
   * of prompts, once per prompt (`countsPrompt`: whether this choice is its prompt's
   * first); whatever the streamed tokens did not already charge is charged now.
   */
  settle(value: UsageValue, countsPrompt: boolean = this.settlements === 0): void {
    this.finishReason ??= finishReasonOf(value);
    if (!value.usage) return;
    const u = value.usage;
    const prompt = typeof u.prompt_tokens === 'number' ? u.prompt_tokens : typeof u.input_tokens === 'number' ? u.input_tokens : 0;
    const total = typeof u.total_tokens === 'number' ? u.total_tokens : 0;
    const output = typeof u.completion_tokens === 'number' ? u.completion_tokens : u.output_tokens;
    const completion = typeof output === 'number' ? output : Math.max(0, total - prompt);
    if (countsPrompt) this.promptTokens += prompt;
    this.settlements++;
    this.completionTokens += completion;
    const owed = this.promptTokens + this.completionTokens - this.charged;
    if (owed > 0) {
      this.ticket.charge(owed);
      this.charged += owed;
    }
  }

  /** A stream that ended with an error event: counted as an error though its status was 200. */
  fail(): void {
    this.failed = true;
  }

  /** The response has gone (or the client has): one usage record, the slot given back. */
  finish(statusCode: number, completed: boolean): void {
    this.ticket.release();
    const ok = statusCode < 400 && !this.failed;
    const completion = this.settlements > 0 ? this.completionTokens : this.streamedTokens;
    this.access.usage.add(this.keyId, this.model, this.access.now(), { requests: 1, errors: ok ? 0 : 1, prompt_tokens: this.promptTokens, completion_tokens: completion });
    // The per-key series are for database keys; anonymous use is in the other series already.
    if (this.keyId !== ANONYMOUS_KEY_ID) this.request.server.metrics.keys.answered(this.keyId, this.model, ok, this.promptTokens, completion);
    const outcome = this.outcome(ok, completed, completion);
    this.request.server.modelStats.answered(this.model, outcome);
    this.request.server.metrics.inferred(this.model, outcome);
  }

  private outcome(ok: boolean, completed: boolean, completion: number): InferenceOutcome {
    const now = performance.now();
    const first = this.firstTextAt;
    // A client that left before the end, or an abort through the API, is vLLM's `abort`;
    // whether it is also an error is what the usage ledger says (an error event, a 4xx/5xx).
    const aborted = !completed || this.request.tracking?.abortedByApi === true;
    const finishReason: FinishReason = aborted ? 'abort' : !ok ? 'error' : (this.finishReason ?? 'stop');
    // n > 1 choices are generated side by side: a token's time is per choice.
    const perChoice = completion / Math.max(1, this.settlements);
    return {
      ok,
      promptTokens: this.promptTokens,
      // Negative when the stream relayed more text chunks than the runtime counted tokens.
      uncountedTokens: completion - this.streamedTokens,
      e2eMs: now - this.request.arrivedAt,
      ttftMs: first === null ? null : first - this.request.arrivedAt,
      tpotMs: first !== null && perChoice > 1 ? (now - first) / (perChoice - 1) : null,
      finishReason,
    };
  }
}

/**
 * Limits and usage of database API keys (docs/auth.md, "Limits"), applied before a
 * request reaches a runtime: model permissions (403), then requests in flight,
 * requests per minute and tokens per minute (429 with `Retry-After` and OpenAI's
 * `x-ratelimit-*` headers). JSON inference routes are admitted in a preHandler, once
 * the body is parsed; upload routes call `admitKeyedCall` when their form is read.
 */
export function installKeyAdmission(app: FastifyInstance, access: AccessControl, lookup: ModelLookup, contextOf: (uid: string) => number | null): void {
  app.decorateRequest('meter', null);
  app.decorate('access', access);
  app.decorate('modelLookup', lookup);
  // Callback-style hooks: they run on every request, and an async hook costs a promise each.
  app.addHook('preHandler', (request, reply, done) => {
    const body = inferenceBody(request);
    if (!body) return done();
    try {
      // A model generates at most its context: a max_tokens past it (Claude Code sends 32k
      // and more) counted whole refused keys whose tokens per minute the answer fits.
      // Only a database key's limits read the estimate: no lookup for other requests.
      admitKeyedCall(request, reply, body.model, request.principal?.key ? wantedTokens(body, contextOf(body.model)) : null);
    } catch (err) {
      return done(err as Error);
    }
    done();
  });
  app.addHook('preSerialization', (request, _reply, payload, done) => {
    if (request.meter && payload && typeof payload === 'object') request.meter.settle(payload as UsageValue);
    done(null, payload);
  });
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Users, keys, limits, usage and audit (auth/access-control.ts). */
    access: AccessControl;
    /** A request's model uid to the running instance's model name. */
    modelLookup: ModelLookup;
  }
}

/**
 * Whether the request's database key, if any, may use model `model` (by uid or model
 * name). `knownName`: the name it had when it answered, for what outlives the uid
 * (a stored response).
 */
export function keyAllowsModel(request: FastifyRequest, model: string, knownName: string | null = null): boolean {
  const key = request.principal?.key;
  if (!key || key.model_permissions.length === 0) return true;
  const name = request.server.modelLookup(model) ?? knownName;
  return key.model_permissions.some((m) => m === model || m === name);
}

/** 403 `key_model_denied` when the request's database key is limited to other models (by uid or model name). */
export function requireKeyModel(request: FastifyRequest, model: string): void {
  if (!keyAllowsModel(request, model)) throw new HangarError('key_model_denied', [model], { param: 'model' });
}

/**
 * Admits one model call of a keyed request, or throws 403/429. A request without a
 * database key (auth off, a login token, a key of the auth config file) has no limits;
 * its usage is counted per model as `anonymous`.
 */
export function admitKeyedCall(request: FastifyRequest, reply: FastifyReply, model: string, maxTokens: number | null): void {
  if (request.meter) return;
  const key = request.principal?.key;
  const { access, modelLookup: lookup } = request.server;
  const name = lookup(model);
  if (!key) {
    const meter = new KeyMeter(access, request, ANONYMOUS_KEY_ID, name === null ? '(unknown)' : model, UNLIMITED);
    request.meter = meter;
    whenRequestDone(reply, () => meter.finish(reply.raw.statusCode, reply.raw.writableFinished));
    return;
  }
  requireKeyModel(request, model);
  const counted = name === null ? '(unknown)' : model;
  const outcome = access.limiter.admit(key.id, key.limits, maxTokens);
  if (isRefusal(outcome)) {
    access.usage.add(key.id, counted, access.now(), { requests: 1, errors: 1 });
    // A refused request is a request and an error, in the key's series as in its usage.
    request.server.metrics.keys.answered(key.id, counted, false, 0, 0);
    request.server.metrics.keys.limited(key.id, outcome.limit);
    throw new HangarError('key_rate_limited', [outcome.limit, outcome.reason], { headers: outcome.headers });
  }
  const headers = outcome.headers;
  for (const name in headers) reply.header(name, headers[name]);
  const meter = new KeyMeter(access, request, key.id, counted, outcome);
  request.meter = meter;
  // Done, not 'finish' (what onResponse waits for): a client gone mid-stream must give its slot back too.
  whenRequestDone(reply, () => meter.finish(reply.raw.statusCode, reply.raw.writableFinished));
}

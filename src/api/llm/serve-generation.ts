import { setMaxListeners } from 'node:events';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { StreamingSettings } from '../../config/config.js';
import { HangarError } from '../../errors/hangar-error.js';
import type { CallTarget, Supervisor } from '../../supervisor/supervisor.js';
import { abortOnDisconnect } from '../client-disconnect.js';
import { chunkObserver, countGenerated } from '../metrics/generation-metrics.js';
import { setOverheadHeader } from '../overhead.js';
import { abortedError } from '../request-tracking.js';
import { randomUUID } from 'node:crypto';
import type { ChoiceSpec, StreamFormat } from './stream-format.js';
import { relayChoices } from './choices-relay.js';
import { sumUsage, type ChoiceUsage } from './choice-usage.js';
import { relayPerToken } from './per-token-relay.js';
import { relayStream } from './stream-relay.js';

export interface GenerationCall {
  target: CallTarget;
  method: 'chat' | 'generate';
  args: unknown[];
  kwargs: Record<string, unknown>;
  stream: boolean;
  /** The request's `stream_options.stream_interval`, if it set one. */
  streamInterval: number | null;
  /** The non-stream answer from the runtime's RESULT. */
  answer: (value: unknown) => Record<string, unknown>;
  /** How the stream's events are spelled (`choice`: one of n > 1). */
  format: (choice?: ChoiceSpec) => StreamFormat;
  /** `stream_options.include_usage`: with n > 1, one usage chunk for all choices. */
  includeUsage?: boolean;
  /** OpenAI's `n`: this many independent choices per prompt; 1 when absent. */
  n?: number;
  /**
   * OpenAI completions' list of prompts: the args of each, in order (`args` alone when
   * absent). Prompt p's choices are numbered p·n to p·n + n − 1, as OpenAI numbers them.
   */
  batch?: unknown[][];
}

/** One runtime call of a request: n per prompt, seeds offset per choice. */
interface PlannedCall {
  args: unknown[];
  kwargs: Record<string, unknown>;
}

/**
 * The shared path of chat and completions: one call, or a stream relayed as SSE.
 * A stream's overhead is everything before the call went to the runtime.
 */
export async function serveGeneration(
  supervisor: Supervisor,
  streaming: StreamingSettings,
  request: FastifyRequest,
  reply: FastifyReply,
  call: GenerationCall,
): Promise<Record<string, unknown> | undefined> {
  const metrics = request.server.metrics;
  const n = call.n ?? 1;
  const plan = planCalls(call, n);
  if (!call.stream) {
    const signal = abortOnDisconnect(reply);
    const results = await allOrNone(
      plan.map((c) => (s: AbortSignal) => supervisor.call(call.target, call.method, c.args, c.kwargs, s)),
      signal,
    );
    setOverheadHeader(request, reply, Math.max(...results.map((r) => r.runtimeMs)));
    for (const result of results) countGenerated(metrics, call.target.uid, result.value);
    return plan.length === 1 ? call.answer(results[0]!.value) : mergeChoices(results.map((r) => call.answer(r.value)), n);
  }
  // The request's stream_options.stream_interval wins over the server's --stream-interval.
  const interval = call.streamInterval ?? streaming.interval;
  if (plan.length > 1) return serveChoices(supervisor, request, reply, call, plan, n, interval, streaming.stallMs);
  const source = supervisor.stream(call.target, call.method, call.args, call.kwargs);
  const dispatchedAt = performance.now();
  // The abort route ends the stream: the runtime stops, the relay ends with request_aborted.
  request.tracking?.controller.signal.addEventListener('abort', () => void source.return(), { once: true });
  const options = {
    interval,
    beforeHeaders: () => setOverheadHeader(request, reply, performance.now() - dispatchedAt),
    observe: trackedObserver(request, meteredObserver(request, chunkObserver(metrics, call.target.uid, request.arrivedAt))),
    aborted: () => abortedError(request),
    stallMs: streaming.stallMs,
  };
  await (streaming.perToken ? relayPerToken : relayStream)(request, reply, source, call.format(), options);
  return undefined;
}

/**
 * The metrics' observer, and the API key's meter when the request has one (it may stop
 * the stream). Of several choices, n per prompt, the meter counts each prompt's tokens
 * once: from the usage of its first choice.
 */
function meteredObserver(request: FastifyRequest, observe: (values: readonly unknown[]) => void, choicesPerPrompt = 1): (values: readonly unknown[], choice?: number) => void {
  const meter = request.meter;
  if (!meter) return observe;
  return (values, choice = 0) => {
    observe(values);
    meter.observe(values, choice % choicesPerPrompt === 0);
  };
}

/**
 * Progress for GET /v1/requests/{id}/progress: tokens so far out of what the request may
 * generate (max_tokens times its choices: inference-body.ts), when it set a limit.
 */
function trackedObserver(request: FastifyRequest, observe: (values: readonly unknown[]) => void): (values: readonly unknown[]) => void {
  const tracking = request.tracking;
  if (!tracking?.maxTokens) return observe;
  let tokens = 0;
  return (values) => {
    observe(values);
    for (const v of values as Array<{ text?: unknown; reasoning_content?: unknown } | null>) if (v?.text || v?.reasoning_content) tokens++;
    tracking.progress = Math.min(1, tokens / tracking.maxTokens!);
  };
}

/**
 * n independent calls per prompt (spread over the replicas), each its own sample; a
 * request's seed becomes seed, seed + 1, ... for a prompt's choices, so they differ and
 * repeat, and each prompt of a list gets what it would get alone.
 */
/**
 * The most a request's n choices may send to the runtime in all: each choice is a call
 * of its own carrying the whole prompt, its images too. A 15 MiB image with n 64 made
 * the control plane encode about a gigabyte at once; its event loop stalled past every
 * runtime's 10 s heartbeat, and all of them restarted.
 */
export const MAX_CHOICE_PAYLOAD_BYTES = 64 * 1024 * 1024;

function planCalls(call: GenerationCall, n: number): PlannedCall[] {
  const prompts = call.batch ?? [call.args];
  if (n > 1) {
    const once = prompts.reduce((sum, args) => sum + Buffer.byteLength(JSON.stringify(args)), 0);
    if (once * n > MAX_CHOICE_PAYLOAD_BYTES) {
      const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
      throw new HangarError('invalid_field', [
        `n: ${n} choices would send the prompt (${mib(once)} with its images) to the model ${n} times, ${mib(once * n)} in all; ` +
          `at most ${mib(MAX_CHOICE_PAYLOAD_BYTES)} per request, so n up to ${Math.max(1, Math.floor(MAX_CHOICE_PAYLOAD_BYTES / once))} for this prompt`,
      ], { param: 'n' });
    }
  }
  return prompts.flatMap((args) => Array.from({ length: n }, (_, i) => ({ args, kwargs: i === 0 ? call.kwargs : withSeedOffset(call.kwargs, i) })));
}

/**
 * Every call's result, or the first failure: the calls still running are then aborted,
 * so a request that fails does not leave its other choices generating for nobody.
 */
async function allOrNone<T>(calls: Array<(signal: AbortSignal) => Promise<T>>, signal: AbortSignal): Promise<T[]> {
  if (calls.length === 1) return [await calls[0]!(signal)];
  const failed = new AbortController();
  const either = AbortSignal.any([signal, failed.signal]);
  // One listener per call (n up to 128, times the prompts): not the leak Node warns of past 10.
  setMaxListeners(calls.length + 10, either);
  return Promise.all(
    calls.map((c) =>
      c(either).catch((err: unknown) => {
        failed.abort();
        throw err;
      }),
    ),
  );
}

function withSeedOffset(kwargs: Record<string, unknown>, offset: number): Record<string, unknown> {
  const config = kwargs.generate_config as Record<string, unknown> | undefined;
  if (typeof config?.seed !== 'number') return kwargs;
  return { ...kwargs, generate_config: { ...config, seed: config.seed + offset } };
}

/** The answers of n choices per prompt as one: choices numbered in order, each prompt counted once, completions summed. */
function mergeChoices(answers: Array<Record<string, unknown>>, n: number): Record<string, unknown> {
  const first = answers[0]!;
  const choices = answers.flatMap((a, i) => (a.choices as Array<Record<string, unknown>>).map((c) => ({ ...c, index: i })));
  const usages = answers.map((a) => a.usage as ChoiceUsage | null);
  return { ...first, choices, usage: usages[0] ? sumUsage(usages, n) : null };
}

/** Several choices streamed (n > 1, or a list of prompts): one generation each, one SSE stream (choices-relay.ts). */
async function serveChoices(
  supervisor: Supervisor,
  request: FastifyRequest,
  reply: FastifyReply,
  call: GenerationCall,
  plan: readonly PlannedCall[],
  n: number,
  interval: number,
  stallMs: number,
): Promise<undefined> {
  const sources = plan.map((c) => supervisor.stream(call.target, call.method, c.args, c.kwargs));
  request.tracking?.controller.signal.addEventListener('abort', () => void Promise.all(sources.map((s) => s.return())), { once: true });
  const shared = { id: `${call.method === 'chat' ? 'chatcmpl' : 'cmpl'}-${randomUUID()}`, created: Math.floor(Date.now() / 1000), ownUsage: false };
  const dispatchedAt = performance.now();
  await relayChoices(request, reply, sources, sources.map((_, index) => call.format({ ...shared, index })), {
    interval,
    stallMs,
    includeUsage: call.includeUsage === true,
    choicesPerPrompt: n,
    observe: meteredObserver(request, trackedObserver(request, chunkObserver(request.server.metrics, call.target.uid, request.arrivedAt)), n),
    aborted: () => abortedError(request),
    beforeHeaders: () => setOverheadHeader(request, reply, performance.now() - dispatchedAt),
  });
  return undefined;
}

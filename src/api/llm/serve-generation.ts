import type { FastifyReply, FastifyRequest } from 'fastify';
import type { StreamingSettings } from '../../config/config.js';
import type { CallTarget, Supervisor } from '../../supervisor/supervisor.js';
import { abortOnDisconnect } from '../client-disconnect.js';
import { chunkObserver, countGenerated } from '../metrics/generation-metrics.js';
import { setOverheadHeader } from '../overhead.js';
import { abortedError } from '../request-tracking.js';
import type { StreamFormat } from './stream-format.js';
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
  /** How the stream's events are spelled. */
  format: () => StreamFormat;
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
  if (!call.stream) {
    const result = await supervisor.call(call.target, call.method, call.args, call.kwargs, abortOnDisconnect(reply));
    setOverheadHeader(request, reply, result.runtimeMs);
    countGenerated(metrics, call.target.uid, result.value);
    return call.answer(result.value);
  }
  const source = supervisor.stream(call.target, call.method, call.args, call.kwargs);
  const dispatchedAt = performance.now();
  // The abort route ends the stream: the runtime stops, the relay ends with request_aborted.
  request.tracking?.controller.signal.addEventListener('abort', () => void source.return(), { once: true });
  const options = {
    interval: call.streamInterval ?? streaming.interval,
    beforeHeaders: () => setOverheadHeader(request, reply, performance.now() - dispatchedAt),
    observe: trackedObserver(request, meteredObserver(request, chunkObserver(metrics, call.target.uid, request.arrivedAt))),
    aborted: () => abortedError(request),
  };
  await (streaming.perToken ? relayPerToken : relayStream)(request, reply, source, call.format(), options);
  return undefined;
}

/** The metrics' observer, and the API key's meter when the request has one (it may stop the stream). */
function meteredObserver(request: FastifyRequest, observe: (values: readonly unknown[]) => void): (values: readonly unknown[]) => void {
  const meter = request.meter;
  if (!meter) return observe;
  return (values) => {
    observe(values);
    meter.observe(values);
  };
}

/** Progress for GET /v1/requests/{id}/progress: tokens so far out of max_tokens, when the request set one. */
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

import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CallTarget, Supervisor } from '../../supervisor/supervisor.js';
import { abortOnDisconnect } from '../client-disconnect.js';
import { countGenerated, observeStream } from '../metrics/generation-metrics.js';
import { setOverheadHeader } from '../overhead.js';
import { sendEventStream } from '../sse/event-stream.js';

export interface GenerationCall {
  target: CallTarget;
  method: 'chat' | 'generate';
  args: unknown[];
  kwargs: Record<string, unknown>;
  stream: boolean;
  /** The non-stream answer from the runtime's RESULT. */
  answer: (value: unknown) => Record<string, unknown>;
  /** The stream's OpenAI events from the runtime's chunks. */
  events: (source: AsyncIterator<unknown>) => AsyncIterator<object>;
}

/**
 * The shared path of chat and completions: one call, or a stream sent as SSE.
 * A stream's overhead is everything before the call went to the runtime.
 */
export async function serveGeneration(supervisor: Supervisor, request: FastifyRequest, reply: FastifyReply, call: GenerationCall): Promise<Record<string, unknown> | undefined> {
  if (!call.stream) {
    const result = await supervisor.call(call.target, call.method, call.args, call.kwargs, abortOnDisconnect(reply));
    setOverheadHeader(request, reply, result.runtimeMs);
    countGenerated(request.server.metrics, call.target.uid, result.value);
    return call.answer(result.value);
  }
  const source = observeStream(request.server.metrics, call.target.uid, request.arrivedAt, supervisor.stream(call.target, call.method, call.args, call.kwargs));
  const dispatchedAt = performance.now();
  await sendEventStream(request, reply, call.events(source), () => setOverheadHeader(request, reply, performance.now() - dispatchedAt));
  return undefined;
}

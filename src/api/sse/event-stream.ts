import type { FastifyReply, FastifyRequest } from 'fastify';
import { HangarError, errorBody } from '../../errors/hangar-error.js';

/** Route option for OpenAI-style streaming: the body's `stream` decides, not `Accept`. */
export const openAiSse = {
  sse: {
    kind: 'manual' as const,
    heartbeat: false,
    // `[DONE]` must go out bare, not as the JSON string "[DONE]".
    serializer: (data: unknown) => (typeof data === 'string' ? data : JSON.stringify(data)),
  },
};

/**
 * Sends events as `data: <json>` then `data: [DONE]` (contract §4). The first event is
 * taken before the headers go out, so a failure there is an ordinary HTTP error; a
 * failure later becomes one `data: {"error": {...}}` event and the stream ends. A
 * client that goes away stops the source, which aborts the generation in the runtime.
 */
export async function sendEventStream(request: FastifyRequest, reply: FastifyReply, events: AsyncIterator<object>, beforeHeaders: () => void): Promise<void> {
  const first = await events.next();
  let closed = false;
  reply.sse.onClose(() => {
    closed = true;
    void events.return?.();
  });
  beforeHeaders();
  try {
    let current = first;
    while (!current.done && !closed) {
      await reply.sse.send({ data: current.value });
      current = await events.next();
    }
    if (!closed) await reply.sse.send({ data: '[DONE]' });
  } catch (err) {
    const error = err instanceof HangarError ? err : new HangarError('internal_error', [String(request.id)], { cause: err });
    if (error.status >= 500) request.log.error({ err: error.cause ?? error, code: error.code }, error.message);
    if (!closed) await reply.sse.send({ data: { error: errorBody(error).error } });
  } finally {
    await events.return?.();
  }
}

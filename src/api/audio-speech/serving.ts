import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HangarError } from '../../errors/hangar-error.js';
import type { Supervisor } from '../../supervisor/supervisor.js';
import { abortOnDisconnect } from '../client-disconnect.js';
import { engineKwargs } from '../media/engine-kwargs.js';
import { setOverheadHeader } from '../overhead.js';
import { whenRequestDone } from '../request-done.js';
import { SPEECH_CONTENT_TYPES, type SpeechBody } from './schema.js';

const ROUTE = '/v1/audio/speech';

/**
 * Speech as audio bytes. With `stream: true` the bytes go out as the engine makes
 * them (chunked transfer, the plain byte stream OpenAI's SDKs read); the first
 * chunk is awaited before the status is sent, so a bad voice is still a 400.
 */
export async function serveSpeech(supervisor: Supervisor, request: FastifyRequest, reply: FastifyReply, body: SpeechBody): Promise<FastifyReply> {
  if (body.stream_format === 'sse') {
    throw new HangarError('field_unsupported', ['stream_format', 'speech is sent as audio bytes (stream_format audio); with stream: true they go out as the engine makes them'], { param: 'stream_format' });
  }
  if (body.instructions?.trim()) {
    throw new HangarError('field_unsupported', ['instructions', 'no engine here takes instructions on how to speak; choose a voice and a speed'], { param: 'instructions' });
  }
  const instance = supervisor.require(body.model);
  if (instance.resolved.modelType === 'audio' && !instance.abilities.includes('text2audio')) {
    throw new HangarError('ability_missing', [body.model, 'text-to-speech', instance.abilities.join(', ')], { param: 'model' });
  }
  const target = { uid: body.model, route: ROUTE, types: ['audio'] as const };
  const kwargs: Record<string, unknown> = { ...engineKwargs(body.kwargs, { input: '`input`' }), speed: body.speed, response_format: body.response_format, stream: body.stream };
  if (body.voice) kwargs.voice = body.voice;
  // The audio type is set only once audio is coming: an error before that goes out as JSON.
  const contentType = SPEECH_CONTENT_TYPES[body.response_format];
  if (!body.stream) {
    const result = await supervisor.call(target, 'speech', [body.input], kwargs, abortOnDisconnect(reply));
    setOverheadHeader(request, reply, result.runtimeMs);
    return reply.type(contentType).send(asBuffer(result.value));
  }
  const source = supervisor.stream(target, 'speech', [body.input], kwargs);
  const dispatchedAt = performance.now();
  let first: IteratorResult<unknown>;
  try {
    first = await source.next();
  } catch (err) {
    await source.return();
    throw err;
  }
  setOverheadHeader(request, reply, performance.now() - dispatchedAt);
  // A client that leaves ends the stream, which aborts the synthesis in the runtime; its
  // connection's close counts too, for an answer queued behind another (request-done.ts).
  // That is the eleventh 'close' listener of this response (the lease, the key meter,
  // request tracking, metrics, the disconnect abort, and fastify's stream pipe each hold
  // one): a fixed count, not a leak, which Node's default of 10 reported as one.
  reply.raw.setMaxListeners(Math.max(reply.raw.getMaxListeners(), 20));
  whenRequestDone(reply, () => void source.return());
  async function* bytes(): AsyncGenerator<Buffer> {
    if (first.done) return;
    yield asBuffer(first.value);
    for await (const chunk of source) yield asBuffer(chunk);
  }
  return reply.type(contentType).send(Readable.from(bytes()));
}

/** msgpack `bin` arrives as a Uint8Array view; fastify sends Buffers as they are. */
function asBuffer(value: unknown): Buffer {
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  throw new HangarError('inference_failed', ['The engine returned no audio bytes']);
}

import { leaseModel } from '../model-lease.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HangarError } from '../../errors/hangar-error.js';
import type { Supervisor } from '../../supervisor/supervisor.js';
import { abortOnDisconnect } from '../client-disconnect.js';
import { parseFields, readForm, requireFile } from '../multipart/form.js';
import { checkAudio } from '../multipart/upload-format.js';
import { setOverheadHeader } from '../overhead.js';
import { engineKwargs } from '../media/engine-kwargs.js';
import { transcriptionFields, type Transcript } from './schema.js';
import { renderTranscript, transcriptEvents } from './transcript-format.js';
import { admitKeyedCall } from '../auth/key-admission.js';

/** Uploads up to OpenAI's own limit for these routes. */
export const MAX_AUDIO_BYTES = 25 * 1024 * 1024;

/** Transcription and translation share everything but the runtime method. */
export async function serveTranscription(supervisor: Supervisor, request: FastifyRequest, reply: FastifyReply, task: 'transcribe' | 'translate'): Promise<FastifyReply> {
  const route = task === 'transcribe' ? '/v1/audio/transcriptions' : '/v1/audio/translations';
  const form = await readForm(request, { route, fileFields: ['file'], maxFileBytes: MAX_AUDIO_BYTES });
  const fields = parseFields(transcriptionFields, form);
  admitKeyedCall(request, reply, fields.model, null);
  await leaseModel(request, reply, fields.model);
  const file = requireFile(form, 'file', route);
  checkAudio(file.data, 'file');
  const instance = supervisor.require(fields.model);
  if (instance.resolved.modelType === 'audio' && !instance.abilities.includes('audio2text')) {
    throw new HangarError('ability_missing', [fields.model, 'speech-to-text', instance.abilities.join(', ')], { param: 'model' });
  }
  const stream = fields.stream === 'true' || fields.stream === 'True';
  if (stream && task === 'translate') {
    throw new HangarError('invalid_field', ['stream: translations are not streamed (OpenAI\'s translations take no stream); leave it out'], { param: 'stream' });
  }
  if (stream && fields.response_format !== 'json' && fields.response_format !== 'text') {
    throw new HangarError('invalid_field', [`stream: a streamed transcript is text events; response_format ${fields.response_format} is not streamed (json or text is)`], { param: 'stream' });
  }
  const granularities = [fields['timestamp_granularities[]'] ?? []].flat();
  // Segment timings cost the engine extra work; ask for them only when the answer shows them.
  const timestamps = ['srt', 'vtt', 'verbose_json'].includes(fields.response_format);
  const kwargs: Record<string, unknown> = { ...engineKwargs(fields.kwargs, { audio: '`file`' }), timestamps };
  if (task === 'transcribe' && fields.language) kwargs.language = fields.language;
  if (fields.prompt) kwargs.prompt = fields.prompt;
  if (fields.temperature !== undefined) kwargs.temperature = fields.temperature;
  const result = await supervisor.call({ uid: fields.model, route, types: ['audio'] }, task, [file.data], kwargs, abortOnDisconnect(reply));
  setOverheadHeader(request, reply, result.runtimeMs);
  if (stream) return reply.type('text/event-stream; charset=utf-8').header('cache-control', 'no-cache').send(transcriptEvents(result.value as Transcript));
  const rendered = renderTranscript(result.value as Transcript, fields.response_format, {
    task,
    language: fields.language,
    words: granularities.includes('word'),
  });
  return reply.type(rendered.type).send(typeof rendered.body === 'string' ? rendered.body : JSON.stringify(rendered.body));
}

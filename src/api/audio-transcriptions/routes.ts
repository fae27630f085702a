import type { FastifyPluginAsync } from 'fastify';
import type { Supervisor } from '../../supervisor/supervisor.js';
import { needs } from '../auth/route-permission.js';
import { multipartSchema } from '../multipart/form-schema.js';
import { transcriptionFields } from './schema.js';
import { serveTranscription } from './serving.js';

/** POST /v1/audio/transcriptions and /v1/audio/translations (multipart, contract §4). */
export const audioTranscriptionRoutes: FastifyPluginAsync<{ supervisor: Supervisor }> = async (app, { supervisor }) => {
  const schema = { tags: ['inference'], ...multipartSchema(transcriptionFields, { required: ['file'] }) };
  app.post('/v1/audio/transcriptions', { ...needs('models:read', ['audio']), schema }, (request, reply) => serveTranscription(supervisor, request, reply, 'transcribe'));
  app.post('/v1/audio/translations', { ...needs('models:read', ['audio']), schema }, (request, reply) => serveTranscription(supervisor, request, reply, 'translate'));
};

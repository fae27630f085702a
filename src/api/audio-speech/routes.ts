import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Supervisor } from '../../supervisor/supervisor.js';
import { needs } from '../auth/route-permission.js';
import { speechBody } from './schema.js';
import { serveSpeech } from './serving.js';
import { speechFormAsBody } from './speech-form.js';

export const audioSpeechRoutes: FastifyPluginAsync<{ supervisor: Supervisor }> = async (fastify, { supervisor }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  // JSON, or the form Xinference's client sends with a voice prompt (speech-form.ts).
  app.post('/v1/audio/speech', { ...needs('models:read', ['audio']), preValidation: speechFormAsBody, schema: { body: speechBody, tags: ['inference'] } }, (request, reply) => serveSpeech(supervisor, request, reply, request.body));
};

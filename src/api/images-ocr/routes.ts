import type { FastifyPluginAsync } from 'fastify';
import type { Supervisor } from '../../supervisor/supervisor.js';
import { needs } from '../auth/route-permission.js';
import { multipartSchema } from '../multipart/form-schema.js';
import { ocrFields } from './schema.js';
import { serveOcr } from './serving.js';

export const imagesOcrRoutes: FastifyPluginAsync<{ supervisor: Supervisor }> = async (app, { supervisor }) => {
  app.post('/v1/images/ocr', { ...needs('models:read', ['image']), schema: { tags: ['inference'], ...multipartSchema(ocrFields, { required: ['image'] }) } }, (request, reply) => serveOcr(supervisor, request, reply));
};

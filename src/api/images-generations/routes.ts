import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Supervisor } from '../../supervisor/supervisor.js';
import { needs } from '../auth/route-permission.js';
import type { MediaStore } from '../media-files/media-store.js';
import { multipartSchema } from '../multipart/form-schema.js';
import { imageGenerationBody, imageVariationFields } from './schema.js';
import { SOURCE_IMAGE_FIELDS, serveGeneration, serveVariation } from './serving.js';

/** POST /v1/images/generations (JSON), /v1/images/variations and /v1/images/edits (multipart), served by diffusers models. */
export const imageGenerationRoutes: FastifyPluginAsync<{ supervisor: Supervisor; media: MediaStore }> = async (fastify, { supervisor, media }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  app.post('/v1/images/generations', { ...needs('models:read', ['image']), schema: { body: imageGenerationBody, tags: ['inference'] } }, (request, reply) =>
    serveGeneration(supervisor, media, request, reply, request.body),
  );
  for (const route of ['/v1/images/variations', '/v1/images/edits'] as const) {
    app.post(route, { ...needs('models:read', ['image']), schema: { tags: ['inference'], ...multipartSchema(imageVariationFields, { required: ['image'], optional: [...SOURCE_IMAGE_FIELDS.slice(1), 'mask'] }) } }, (request, reply) =>
      serveVariation(supervisor, media, request, reply, route),
    );
  }
};

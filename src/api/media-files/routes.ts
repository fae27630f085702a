import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { HangarError } from '../../errors/hangar-error.js';
import { needs } from '../auth/route-permission.js';
import type { MediaStore } from './media-store.js';

/** GET /v1/media/{id}: a generated image or video answered as `url` (ours: Xinference answers a server path). */
export const mediaFileRoutes: FastifyPluginAsync<{ media: MediaStore }> = async (fastify, { media }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  // Any id the store does not hold is a 404 (docs/media.md), whatever its shape: a
  // mistyped link is not a malformed request.
  const params = z.object({ id: z.string().min(1) });
  app.get('/v1/media/:id', { ...needs('models:read'), schema: { params, tags: ['inference'] } }, async (request, reply) => {
    const file = media.get(request.params.id);
    if (!file) throw new HangarError('media_not_found', [request.params.id]);
    const maxAge = Math.max(0, Math.floor((file.expiresAt - Date.now()) / 1000));
    return reply.type(file.contentType).header('cache-control', `private, max-age=${maxAge}`).send(file.data);
  });
};

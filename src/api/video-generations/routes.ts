import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Supervisor } from '../../supervisor/supervisor.js';
import { needs } from '../auth/route-permission.js';
import { abortOnDisconnect } from '../client-disconnect.js';
import type { MediaStore } from '../media-files/media-store.js';
import { engineKwargs } from '../media/engine-kwargs.js';
import { MP4, resultItems } from '../media/generated-files.js';
import { setOverheadHeader } from '../overhead.js';
import { videoGenerationBody } from './schema.js';

const ROUTE = '/v1/video/generations';

/** Text-to-video through diffusers models; videos come back as MP4, `url` or `b64_json`. */
export const videoGenerationRoutes: FastifyPluginAsync<{ supervisor: Supervisor; media: MediaStore }> = async (fastify, { supervisor, media }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  app.post(ROUTE, { ...needs('models:read', ['video']), schema: { body: videoGenerationBody, tags: ['inference'] } }, async (request, reply) => {
    const body = request.body;
    const kwargs: Record<string, unknown> = { ...engineKwargs(body.kwargs, { prompt: '`prompt`' }), n: body.n };
    if (body.negative_prompt) kwargs.negative_prompt = body.negative_prompt;
    const result = await supervisor.call({ uid: body.model, route: ROUTE, types: ['video'] }, 'text_to_video', [body.prompt], kwargs, abortOnDisconnect(reply));
    setOverheadHeader(request, reply, result.runtimeMs);
    const videos = (result.value as { videos?: unknown }).videos;
    return { created: Math.floor(Date.now() / 1000), data: resultItems(request, media, videos, body.response_format, MP4) };
  });
};

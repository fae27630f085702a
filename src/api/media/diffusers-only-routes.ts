import { leaseModel } from '../model-lease.js';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { HangarError } from '../../errors/hangar-error.js';
import type { Registry } from '../../registry/index.js';
import type { Supervisor } from '../../supervisor/supervisor.js';
import { needs } from '../auth/route-permission.js';
import { admitKeyedCall } from '../auth/key-admission.js';
import { abortOnDisconnect } from '../client-disconnect.js';
import { MAX_IMAGE_BYTES } from '../images-ocr/serving.js';
import type { MediaStore } from '../media-files/media-store.js';
import { parseFields, readForm, requireFile } from '../multipart/form.js';
import { multipartSchema } from '../multipart/form-schema.js';
import { checkImage } from '../multipart/upload-format.js';
import { setOverheadHeader } from '../overhead.js';
import { engineKwargs } from './engine-kwargs.js';
import { MP4, PNG, resultItems } from './generated-files.js';
import { formNumber } from '../multipart/form-number.js';

const fields = z.looseObject({
  model: z.string({ error: 'Invalid input. Please specify the `model` field.' }).min(1),
  prompt: z.string().min(1, 'must not be empty'),
  negative_prompt: z.string().optional(),
  n: formNumber(z.int().min(1).max(10)).default(1),
  size: z.string().regex(/^\d{2,4}[x*]\d{2,4}$/, 'must look like 1024x1024').optional(),
  response_format: z.enum(['url', 'b64_json']).default('url'),
  kwargs: z.string().optional(),
});

interface DiffusersRoute {
  url: string;
  /** The uploaded images, in the order the runtime method takes them. */
  files: readonly string[];
  method: string;
  type: 'image' | 'video';
  ability: string;
}

/**
 * Routes only diffusers pipelines serve, on GPU hosts (Xinference's image-to-video,
 * first-and-last-frame video, inpainting): present, guarded and validated here, and a
 * clear 400 naming the engine where it is not installed (docs/media.md). The
 * diffusers engine's pipelines for them are not written yet: on a host with diffusers
 * a model without the ability is refused by name, as on every media route.
 */
const ROUTES: readonly DiffusersRoute[] = [
  { url: '/v1/video/generations/image', files: ['image'], method: 'image_to_video', type: 'video', ability: 'image2video' },
  { url: '/v1/video/generations/flf', files: ['first_frame', 'last_frame'], method: 'firstlastframe_to_video', type: 'video', ability: 'firstlastframe2video' },
  { url: '/v1/images/inpainting', files: ['image', 'mask_image'], method: 'inpainting', type: 'image', ability: 'inpainting' },
];

export const diffusersOnlyRoutes: FastifyPluginAsync<{ supervisor: Supervisor; registry: Registry; media: MediaStore }> = async (app, { supervisor, registry, media }) => {
  for (const route of ROUTES) {
    app.post(route.url, { ...needs('models:read', [route.type]), schema: { tags: ['inference'], ...multipartSchema(fields, { required: route.files }) } }, (request, reply) => serve(route, request, reply));
  }

  async function serve(route: DiffusersRoute, request: FastifyRequest, reply: FastifyReply): Promise<Record<string, unknown>> {
    const form = await readForm(request, { route: route.url, fileFields: route.files, maxFileBytes: MAX_IMAGE_BYTES });
    const given = parseFields(fields, form);
    const images = route.files.map((field) => {
      const file = requireFile(form, field, route.url);
      checkImage(file.data, field);
      return file.data;
    });
    if (!registry.hasPythonModule('diffusers')) {
      throw new HangarError('route_engine_missing', [route.url, 'diffusers', 'a GPU host with docker/requirements-gpu.txt installed, or the GPU image of docker/compose.yaml']);
    }
    admitKeyedCall(request, reply, given.model, null);
    await leaseModel(request, reply, given.model);
    const instance = supervisor.require(given.model);
    if (instance.state === 'READY' && !instance.abilities.includes(route.ability)) {
      throw new HangarError('ability_missing', [given.model, route.ability, instance.abilities.join(', ')], { param: 'model' });
    }
    const kwargs: Record<string, unknown> = { ...engineKwargs(given.kwargs), n: given.n };
    if (given.size) kwargs.size = given.size;
    if (given.negative_prompt) kwargs.negative_prompt = given.negative_prompt;
    const result = await supervisor.call({ uid: given.model, route: route.url, types: [route.type] }, route.method, [...images, given.prompt], kwargs, abortOnDisconnect(reply));
    setOverheadHeader(request, reply, result.runtimeMs);
    const value = result.value as { images?: unknown; videos?: unknown };
    const items = route.type === 'video' ? value.videos : value.images;
    return { created: Math.floor(Date.now() / 1000), data: resultItems(request, media, items, given.response_format, route.type === 'video' ? MP4 : PNG) };
  }
};

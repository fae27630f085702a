import { leaseModel } from '../model-lease.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HangarError } from '../../errors/hangar-error.js';
import type { Supervisor } from '../../supervisor/supervisor.js';
import { abortOnDisconnect } from '../client-disconnect.js';
import type { MediaStore } from '../media-files/media-store.js';
import { engineKwargs } from '../media/engine-kwargs.js';
import { PNG, resultItems } from '../media/generated-files.js';
import { parseFields, readForm, requireFile } from '../multipart/form.js';
import { checkImage } from '../multipart/upload-format.js';
import { MAX_IMAGE_BYTES } from '../images-ocr/serving.js';
import { setOverheadHeader } from '../overhead.js';
import { imageVariationFields, type ImageGenerationBody } from './schema.js';
import { admitKeyedCall } from '../auth/key-admission.js';

function requireAbility(supervisor: Supervisor, uid: string, ability: string, what: string): void {
  const instance = supervisor.require(uid);
  if (instance.resolved.modelType === 'image' && !instance.abilities.includes(ability)) {
    throw new HangarError('ability_missing', [uid, what, instance.abilities.join(', ')], { param: 'model' });
  }
}

export async function serveGeneration(supervisor: Supervisor, media: MediaStore, request: FastifyRequest, reply: FastifyReply, body: ImageGenerationBody): Promise<Record<string, unknown>> {
  const route = '/v1/images/generations';
  requireAbility(supervisor, body.model, 'text2image', 'text-to-image');
  const kwargs: Record<string, unknown> = { ...engineKwargs(body.kwargs), n: body.n };
  if (body.size) kwargs.size = body.size;
  if (body.negative_prompt) kwargs.negative_prompt = body.negative_prompt;
  const result = await supervisor.call({ uid: body.model, route, types: ['image'] }, 'text_to_image', [body.prompt], kwargs, abortOnDisconnect(reply));
  setOverheadHeader(request, reply, result.runtimeMs);
  const images = (result.value as { images?: unknown }).images;
  return { created: Math.floor(Date.now() / 1000), data: resultItems(request, media, images, body.response_format, PNG) };
}

/**
 * Image to image: Xinference's /v1/images/variations and OpenAI's /v1/images/edits
 * (the source image in `image`). A `mask` (inpainting) is refused plainly: the
 * diffusers engine here has no inpainting pipeline yet.
 */
export async function serveVariation(supervisor: Supervisor, media: MediaStore, request: FastifyRequest, reply: FastifyReply, route: '/v1/images/variations' | '/v1/images/edits'): Promise<Record<string, unknown>> {
  const form = await readForm(request, { route, fileFields: ['image', 'mask'], maxFileBytes: MAX_IMAGE_BYTES });
  const fields = parseFields(imageVariationFields, form);
  admitKeyedCall(request, reply, fields.model, null);
  await leaseModel(request, reply, fields.model);
  if (form.files.has('mask')) throw new HangarError('invalid_field', ['mask: inpainting with a mask is not supported; send the image alone'], { param: 'mask' });
  const image = requireFile(form, 'image', route);
  checkImage(image.data, 'image');
  requireAbility(supervisor, fields.model, 'image2image', 'image-to-image');
  const kwargs: Record<string, unknown> = { ...engineKwargs(fields.kwargs), n: fields.n };
  if (fields.size) kwargs.size = fields.size;
  if (fields.negative_prompt) kwargs.negative_prompt = fields.negative_prompt;
  const result = await supervisor.call({ uid: fields.model, route, types: ['image'] }, 'image_to_image', [image.data, fields.prompt], kwargs, abortOnDisconnect(reply));
  setOverheadHeader(request, reply, result.runtimeMs);
  const images = (result.value as { images?: unknown }).images;
  return { created: Math.floor(Date.now() / 1000), data: resultItems(request, media, images, fields.response_format, PNG) };
}

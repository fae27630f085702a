import { leaseModel } from '../model-lease.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HangarError } from '../../errors/hangar-error.js';
import type { Supervisor } from '../../supervisor/supervisor.js';
import { abortOnDisconnect } from '../client-disconnect.js';
import type { MediaStore } from '../media-files/media-store.js';
import { engineKwargs } from '../media/engine-kwargs.js';
import { PNG, resultItems } from '../media/generated-files.js';
import { parseFields, readForm, requireFile, type Form, type UploadedFile } from '../multipart/form.js';
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
  const kwargs: Record<string, unknown> = { ...engineKwargs(body.kwargs, { prompt: '`prompt`' }), n: body.n };
  if (body.size) kwargs.size = body.size;
  if (body.negative_prompt) kwargs.negative_prompt = body.negative_prompt;
  const result = await supervisor.call({ uid: body.model, route, types: ['image'] }, 'text_to_image', [body.prompt], kwargs, abortOnDisconnect(reply));
  setOverheadHeader(request, reply, result.runtimeMs);
  const images = (result.value as { images?: unknown }).images;
  return { created: Math.floor(Date.now() / 1000), data: resultItems(request, media, images, body.response_format, PNG) };
}

/**
 * Where clients put the source image: `image` (OpenAI's SDK for one image, Xinference's
 * image_to_image), `image[]` (OpenAI's SDK for a list), `images` and `images[]`
 * (Xinference's image_edit). Xinference's server reads all four.
 */
export const SOURCE_IMAGE_FIELDS = ['image', 'image[]', 'images', 'images[]'] as const;

/**
 * Image to image: Xinference's /v1/images/variations and OpenAI's /v1/images/edits.
 * One source image: the diffusers engine here takes no reference images, so a second
 * is refused by name rather than dropped. A `mask` (inpainting) is refused plainly:
 * the diffusers engine here has no inpainting pipeline yet.
 */
export async function serveVariation(supervisor: Supervisor, media: MediaStore, request: FastifyRequest, reply: FastifyReply, route: '/v1/images/variations' | '/v1/images/edits'): Promise<Record<string, unknown>> {
  // One source image, so at most two files (with a mask) are ever held.
  const form = await readForm(request, { route, fileFields: [...SOURCE_IMAGE_FIELDS, 'mask'], maxFileBytes: MAX_IMAGE_BYTES, oneOf: SOURCE_IMAGE_FIELDS });
  const fields = parseFields(imageVariationFields, form);
  if (route === '/v1/images/edits' && !fields.prompt) {
    throw new HangarError('invalid_field', [fields.prompt === undefined ? 'Invalid input. Please specify the `prompt` field.' : 'prompt: must not be empty'], { param: 'prompt' });
  }
  if (fields.stream?.toLowerCase() === 'true') {
    throw new HangarError('invalid_field', ['stream: streamed image edits (partial images as events) are not supported; leave stream out'], { param: 'stream' });
  }
  admitKeyedCall(request, reply, fields.model, null);
  await leaseModel(request, reply, fields.model);
  if (form.files.has('mask')) throw new HangarError('invalid_field', ['mask: inpainting with a mask is not supported; send the image alone'], { param: 'mask' });
  const image = sourceImage(form, route);
  checkImage(image.data, image.field);
  requireAbility(supervisor, fields.model, 'image2image', 'image-to-image');
  const kwargs: Record<string, unknown> = { ...engineKwargs(fields.kwargs, { image: '`image`', prompt: '`prompt`' }), n: fields.n };
  // `original` (Xinference) and `auto` (OpenAI) both mean the source image's size.
  if (fields.size && fields.size !== 'original' && fields.size !== 'auto') kwargs.size = fields.size;
  if (fields.negative_prompt) kwargs.negative_prompt = fields.negative_prompt;
  const result = await supervisor.call({ uid: fields.model, route, types: ['image'] }, 'image_to_image', [image.data, fields.prompt || null], kwargs, abortOnDisconnect(reply));
  setOverheadHeader(request, reply, result.runtimeMs);
  const images = (result.value as { images?: unknown }).images;
  return { created: Math.floor(Date.now() / 1000), data: resultItems(request, media, images, fields.response_format, PNG) };
}

/** The source image, in whichever of its fields it came (readForm let in one of them). */
function sourceImage(form: Form, route: string): UploadedFile {
  return requireFile(form, SOURCE_IMAGE_FIELDS.find((field) => form.files.has(field)) ?? 'image', route);
}

import { leaseModel } from '../model-lease.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HangarError } from '../../errors/hangar-error.js';
import type { Supervisor } from '../../supervisor/supervisor.js';
import { abortOnDisconnect } from '../client-disconnect.js';
import { engineKwargs } from '../media/engine-kwargs.js';
import { parseFields, readForm, requireFile } from '../multipart/form.js';
import { checkOcrUpload } from '../multipart/upload-format.js';
import { setOverheadHeader } from '../overhead.js';
import { ocrFields } from './schema.js';
import { admitKeyedCall } from '../auth/key-admission.js';

const ROUTE = '/v1/images/ocr';
export const MAX_IMAGE_BYTES = 20 * 1024 * 1024;

/** The engine's answer as Xinference gives it: `{text, ...}` (tesseract adds `words` with boxes and `lang`). */
export async function serveOcr(supervisor: Supervisor, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const form = await readForm(request, { route: ROUTE, fileFields: ['image'], maxFileBytes: MAX_IMAGE_BYTES });
  const fields = parseFields(ocrFields, form);
  admitKeyedCall(request, reply, fields.model, null);
  await leaseModel(request, reply, fields.model);
  const image = requireFile(form, 'image', ROUTE);
  // A PDF is read page by page in the runtime (kwargs `pages`, `dpi`: docs/media.md).
  checkOcrUpload(image.data, 'image');
  const instance = supervisor.require(fields.model);
  if (instance.resolved.modelType === 'image' && !instance.abilities.includes('ocr')) {
    throw new HangarError('ability_missing', [fields.model, 'ocr', instance.abilities.join(', ')], { param: 'model' });
  }
  const kwargs: Record<string, unknown> = engineKwargs(fields.kwargs, { image: '`image`' });
  if (fields.lang) kwargs.lang = fields.lang;
  if (fields.prompt) kwargs.prompt = fields.prompt;
  const result = await supervisor.call({ uid: fields.model, route: ROUTE, types: ['image'] }, 'ocr', [image.data], kwargs, abortOnDisconnect(reply));
  setOverheadHeader(request, reply, result.runtimeMs);
  return reply.type('application/json; charset=utf-8').send(JSON.stringify({ model: fields.model, ...(result.value as Record<string, unknown>) }));
}

import type { FastifyRequest } from 'fastify';
import { HangarError } from '../../errors/hangar-error.js';
import type { MediaStore } from '../media-files/media-store.js';

export type ResultFormat = 'url' | 'b64_json';

/**
 * OpenAI's `data` list for generated files: each as base64, or as a link to
 * GET /v1/media/{id} on this service, built from the host the client used.
 */
export function resultItems(request: FastifyRequest, media: MediaStore, files: unknown, format: ResultFormat, kind: { contentType: string; extension: string }): Array<{ url?: string; b64_json?: string }> {
  if (!Array.isArray(files) || !files.every((f) => f instanceof Uint8Array)) {
    throw new HangarError('inference_failed', ['The engine returned no files']);
  }
  return (files as Uint8Array[]).map((file) => {
    const data = Buffer.from(file.buffer, file.byteOffset, file.byteLength);
    if (format === 'b64_json') return { b64_json: data.toString('base64') };
    const id = media.put(data, kind.contentType, kind.extension);
    return { url: `${request.protocol}://${request.host}/v1/media/${id}` };
  });
}

export const PNG = { contentType: 'image/png', extension: 'png' };
export const MP4 = { contentType: 'video/mp4', extension: 'mp4' };

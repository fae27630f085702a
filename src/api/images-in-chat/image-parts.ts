import type { ImageFetchSettings } from '../../config/image-fetch.js';
import { HangarError } from '../../errors/hangar-error.js';
import { type FetchBudget, fetchImage, ImageFetchError } from './image-fetch.js';

/** The most images one request may carry (the runtime holds the same line). */
export const MAX_IMAGES_PER_REQUEST = 16;

interface ImagePart {
  /** The field, as `param` names it: `messages.0.content.1.image_url`. */
  param: string;
  url: unknown;
  part: Record<string, unknown>;
}

type Message = { content?: unknown };

function imageParts(messages: readonly Message[]): ImagePart[] {
  const found: ImagePart[] = [];
  messages.forEach((message, i) => {
    if (!Array.isArray(message.content)) return;
    message.content.forEach((part: unknown, j) => {
      if (typeof part !== 'object' || part === null || (part as { type?: unknown }).type !== 'image_url') return;
      const value = (part as { image_url?: unknown }).image_url;
      const url = typeof value === 'object' && value !== null ? (value as { url?: unknown }).url : value;
      found.push({ param: `messages.${i}.content.${j}.image_url`, url, part: part as Record<string, unknown> });
    });
  });
  return found;
}

export function hasImageParts(messages: readonly Message[]): boolean {
  return imageParts(messages).length > 0;
}

/**
 * The messages with every `image_url` part carrying a `data:` URL: `http(s)` images
 * are fetched here (image-fetch.ts), so the runtime only ever decodes bytes. A bad
 * part is a 400 naming it; nothing reaches the model until every image is in hand.
 */
export async function resolveImageParts<M extends Message>(messages: M[], settings: ImageFetchSettings, signal?: AbortSignal): Promise<M[]> {
  const parts = imageParts(messages);
  if (parts.length === 0) return messages;
  if (parts.length > MAX_IMAGES_PER_REQUEST) {
    throw new HangarError('invalid_field', [`messages: ${parts.length} images; at most ${MAX_IMAGES_PER_REQUEST} per request`], { param: 'messages' });
  }
  const urls = new Map<Record<string, unknown>, string>();
  for (const { param, part } of parts) checkDetail(param, part);
  // The fetches share a budget of twice one image (sixteen 19 MiB images by URL held
  // 1.5 GB for a 1.5 kB request) and stop together: when the client goes, or when one
  // image fails and the answer is already a 400.
  const stop = new AbortController();
  const budget: FetchBudget = { left: 2 * settings.maxBytes, total: 2 * settings.maxBytes, signal: signal ? AbortSignal.any([signal, stop.signal]) : stop.signal };
  try {
    await Promise.all(parts.map(async ({ param, url, part }) => urls.set(part, await dataUrl(param, url, settings, budget))));
  } catch (error) {
    stop.abort(new ImageFetchError('another image of the request failed'));
    throw error;
  }
  return messages.map((message) => {
    if (!Array.isArray(message.content)) return message;
    const content = message.content.map((part: Record<string, unknown>) => {
      const url = urls.get(part);
      if (url === undefined) return part;
      const detail = typeof part.image_url === 'object' && part.image_url !== null ? (part.image_url as { detail?: unknown }).detail : undefined;
      return { ...part, image_url: detail === undefined ? { url } : { url, detail } };
    });
    return { ...message, content };
  });
}

// URL schemes are case-insensitive: `DATA:image/png;base64,...` is a data: URL too.
const DATA_URL = /^data:([^;,]*)((?:;[^;,]*)*),/i;
// What the runtime's decoder takes (Python's b64decode with validate): no whitespace, no URL-safe alphabet.
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
/** OpenAI's values for `image_url.detail`. */
const DETAILS: readonly unknown[] = ['auto', 'low', 'high'];

function checkDetail(param: string, part: Record<string, unknown>): void {
  const value = part.image_url;
  const detail = typeof value === 'object' && value !== null ? (value as { detail?: unknown }).detail : undefined;
  if (detail !== undefined && detail !== null && !DETAILS.includes(detail)) {
    throw new HangarError('invalid_field', [`${param}.detail: must be auto, low or high, not ${JSON.stringify(detail)}`], { param: `${param}.detail` });
  }
}

async function dataUrl(param: string, url: unknown, settings: ImageFetchSettings, budget: FetchBudget): Promise<string> {
  if (typeof url !== 'string' || url.length === 0) throw new HangarError('invalid_field', [`${param}.url: must be a URL string (http(s) or data:)`], { param: `${param}.url` });
  if (/^data:/i.test(url)) return checkedDataUrl(param, url, settings.maxBytes);
  try {
    const image = await fetchImage(url, settings, budget);
    return `data:${image.mediaType};base64,${image.bytes.toString('base64')}`;
  } catch (error) {
    if (!(error instanceof ImageFetchError)) throw error;
    const code = error.tooLarge ? 'image_too_large' : error.refused ? 'image_url_refused' : 'image_fetch_failed';
    throw new HangarError(code, [`${param}.url`, error.message], { param: `${param}.url` });
  }
}

function checkedDataUrl(param: string, url: string, maxBytes: number): string {
  const match = DATA_URL.exec(url.slice(0, 256));
  const mediaType = match?.[1]?.toLowerCase() ?? '';
  if (!match || !match[2]!.split(';').includes('base64')) {
    throw new HangarError('invalid_field', [`${param}.url: a data: URL must be base64-encoded (data:image/png;base64,...)`], { param: `${param}.url` });
  }
  if (!mediaType.startsWith('image/')) throw new HangarError('invalid_field', [`${param}.url: a data: URL must hold an image (image/png, image/jpeg, ...), not ${mediaType || 'no media type'}`], { param: `${param}.url` });
  const bytes = Math.floor(((url.length - match[0].length) * 3) / 4);
  if (bytes > maxBytes) throw new HangarError('image_too_large', [`${param}.url`, `the image is about ${bytes} bytes, over the limit of ${maxBytes} (HANGAR_IMAGE_MAX_BYTES)`], { param: `${param}.url` });
  // Padded to a multiple of 4, as the runtime's decoder wants it (`AAA` reached it and was its 400, without the part's name).
  const payload = url.slice(match[0].length);
  if (payload.length === 0 || payload.length % 4 !== 0 || !BASE64.test(payload)) {
    throw new HangarError('invalid_field', [`${param}.url: the data: URL's payload is empty or not base64 (A-Z, a-z, 0-9, + and /, padded with = to a multiple of 4 characters)`], { param: `${param}.url` });
  }
  // The scheme in the case every engine reads.
  return `data:${url.slice(5)}`;
}

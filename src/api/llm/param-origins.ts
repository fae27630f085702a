import { HangarError } from '../../errors/hangar-error.js';

/**
 * Where each message of a chat request built from another API's request came from
 * (Anthropic's Messages, OpenAI's Responses), so that an error about the chat request
 * names the field the client sent. Anthropic's `system` becomes chat's first message
 * and shifts every index by one; a Responses input item is a message or part of one.
 * `parts[j]`: where chat part j of that message came from, when its content is parts.
 */
export type ChatOrigins = Array<{ path: string; parts?: string[] }>;

/** How each API names an image part's address: `source` (Anthropic), `image_url` (Responses). */
export interface OriginNames {
  origins: ChatOrigins;
  image: string;
  /** What a chat message path without an origin is called (Responses: `input`). */
  fallback?: string;
}

const CHAT_PATH = /^messages\.(\d+)(?:\.content\.(\d+)(\.image_url(?:\.url)?)?)?(\.[\w.]+)?$/;
// The same paths inside a message's text: the runtime's `messages[3].content[1]`, or the control plane's dotted form.
const CHAT_PATH_IN_TEXT = /\bmessages(?:\[(\d+)\](?:\.content\[(\d+)\])?|\.\d+(?:\.content\.\d+(?:\.image_url(?:\.(?:url|detail))?)?)?)/g;

/** A chat field path (`messages.3.content.1.image_url.url`) as the client's (`messages.2.content.1.source`). */
export function originalParam(param: string, names: OriginNames): string {
  const match = CHAT_PATH.exec(param);
  if (!match) return param;
  const [, message, part, image, rest = ''] = match;
  const origin = names.origins[Number(message)];
  if (!origin) return names.fallback ?? param;
  if (part === undefined) return `${origin.path}${rest}`;
  const partPath = origin.parts?.[Number(part)];
  if (!partPath) return origin.path;
  // The image's address is the API's own field; anything beside it (`detail`) keeps its name.
  if (image && (image.endsWith('.url') || !rest)) return `${partPath}.${names.image}`;
  return `${partPath}${rest}`;
}

/** The same in a message, where the runtime writes `messages[3].content[1]` and the control plane `messages.3.content.1.image_url.url`. */
function originalText(text: string, names: OriginNames): string {
  // One pass, so that a path already renamed is not read as chat's again.
  return text.replace(CHAT_PATH_IN_TEXT, (whole, m?: string, p?: string) => {
    if (m === undefined) return originalParam(whole, names);
    return originalParam(p === undefined ? `messages.${m}` : `messages.${m}.content.${p}`, names);
  });
}

/** An error naming a chat message, naming the client's field instead. */
function renamed(err: unknown, names: OriginNames): unknown {
  if (err instanceof HangarError && err.param && CHAT_PATH.test(err.param)) return err.withParam(originalParam(err.param, names), originalText(err.message, names));
  return err;
}

/** Answers what `pending` answers; an error naming a chat message names the client's field instead. */
export async function withOriginalNames<T>(pending: Promise<T>, names: OriginNames): Promise<T> {
  try {
    return await pending;
  } catch (err) {
    throw renamed(err, names);
  }
}

/** withOriginalNames for work that is not a promise (a schema check). */
export function withOriginalNamesNow<T>(work: () => T, names: OriginNames): T {
  try {
    return work();
  } catch (err) {
    throw renamed(err, names);
  }
}

import { SourceUnreachable } from '../invalid-input.js';

/** A hub the GGUF files come from: Hugging Face's or ModelScope's HTTP API (model-file.ts). */
export interface Hub {
  name: string;
  endpoint: string;
  url: (modelId: string, file: string) => string;
  cacheFolder: (modelId: string) => string;
}

/** Statuses that say "not now": tried again, as a hub's own clients do, before a download fails. */
export const TRANSIENT = new Set([429, 500, 502, 503, 504]);
/** Tries after the first, 1, 2 and 4 s apart (or as Retry-After says). */
export const RETRIES = 3;
/** The longest Retry-After obeyed: a longer wait fails now, as "try later". */
const MAX_RETRY_WAIT_MS = 30_000;

/** The wait before try `attempt` + 1 (attempt counts from 1). */
export function retryWaitMs(attempt: number): number {
  return 1000 * 2 ** (attempt - 1);
}

/**
 * The hub's answer to a GET (from `offset` on), within `timeoutMs`. The limit is on
 * the answer, not on the download: the body is the caller's to watch, through
 * `controller` (aborting it ends the body too). Redirects (the hub sends LFS files to a
 * CDN) are followed here, so the hub's own X-Linked-* headers are kept and the token
 * goes to the hub only. A busy hub is asked again (TRANSIENT, RETRIES).
 */
export async function openHubFile(
  hub: Hub, url: string, offset: number, timeoutMs: number, unreachable: (why: string) => string, controller = new AbortController(),
): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    const response = await openOnce(hub, url, offset, timeoutMs, unreachable, controller);
    if (!TRANSIENT.has(response.status) || attempt > RETRIES) return response;
    // No header is no instruction (Number(null) is 0: the fallback never ran).
    const header = response.headers.get('retry-after');
    const after = header === null || header.trim() === '' ? Number.NaN : Number(header);
    const waitMs = Number.isFinite(after) && after >= 0 ? after * 1000 : retryWaitMs(attempt);
    if (waitMs > MAX_RETRY_WAIT_MS) return response;
    await response.body?.cancel();
    await new Promise((resolve) => setTimeout(resolve, waitMs));
  }
}

async function openOnce(hub: Hub, url: string, offset: number, timeoutMs: number, unreachable: (why: string) => string, lookup: AbortController): Promise<Response> {
  const timer = setTimeout(() => lookup.abort(new Error(`no answer within ${timeoutMs / 1000}s`)), timeoutMs);
  const range: Record<string, string> = offset > 0 ? { range: `bytes=${offset}-` } : {};
  try {
    let response = await fetch(url, { headers: { ...authorization(hub), ...range }, signal: lookup.signal, redirect: 'manual' });
    const linked = new Headers();
    for (const name of ['x-linked-etag', 'x-linked-size']) {
      const value = response.headers.get(name);
      if (value !== null) linked.set(name, value);
    }
    // The token goes to the hub's own origin only, and never again once a redirect left
    // it: compared hop by hop, a CDN redirecting to itself got it on its second hop.
    const hubOrigin = new URL(url).origin;
    let onHub = true;
    for (let hops = 0; hops < 5 && response.status >= 300 && response.status < 400 && response.headers.get('location'); hops++) {
      await response.body?.cancel();
      const next = new URL(response.headers.get('location')!, url);
      onHub &&= next.origin === hubOrigin;
      url = next.href;
      response = await fetch(url, { headers: { ...(onHub ? authorization(hub) : {}), ...range }, signal: lookup.signal, redirect: 'manual' });
    }
    if (linked.has('x-linked-etag') || linked.has('x-linked-size')) {
      const headers = new Headers(response.headers);
      for (const [name, value] of linked) headers.set(name, value);
      return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
    }
    return response;
  } catch (err) {
    throw new SourceUnreachable(unreachable(`the hub ${hub.endpoint} could not be reached (waited at most ${timeoutMs / 1000}s; ${causeOf(err)})`));
  } finally {
    clearTimeout(timer);
  }
}

function authorization(hub: Hub): Record<string, string> {
  const token = hub.name === 'huggingface' ? (process.env.HF_TOKEN ?? process.env.HUGGING_FACE_HUB_TOKEN) : process.env.MODELSCOPE_API_TOKEN;
  return token ? { authorization: `Bearer ${token}` } : {};
}

export function causeOf(err: unknown): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  const cause = e.cause?.code ?? e.cause?.message;
  return `${e.name ?? 'Error'}: ${e.message ?? String(err)}${cause ? ` (${cause})` : ''}`;
}

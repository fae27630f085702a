/**
 * How chat requests' image URLs are fetched (docs/vision.md). The service, not the
 * runtime, fetches `http(s)` images, so these limits hold in one place for every
 * engine: a size cap, a timeout, and by default only public addresses (a request
 * must not make the server reach its own network: loopback, private ranges, cloud
 * metadata at 169.254.169.254).
 */
export interface ImageFetchSettings {
  /**
   * HANGAR_IMAGE_FETCH: `public` (default) fetches from public addresses only;
   * `any` also from private and loopback ones (a service inside a private network
   * whose images live there); `off` refuses http(s) image URLs (data: URLs still work).
   */
  mode: 'public' | 'any' | 'off';
  /** HANGAR_IMAGE_MAX_BYTES: the largest image, fetched or in a data: URL (default 20 MiB, OpenAI's cap). */
  maxBytes: number;
  /** HANGAR_IMAGE_FETCH_TIMEOUT_MS: the whole fetch of one image, redirects included (default 10 s). */
  timeoutMs: number;
}

export const DEFAULT_IMAGE_FETCH: ImageFetchSettings = { mode: 'public', maxBytes: 20 * 1024 * 1024, timeoutMs: 10_000 };

export function imageFetchFromEnv(env: NodeJS.ProcessEnv): ImageFetchSettings {
  const mode = (env.HANGAR_IMAGE_FETCH ?? '').trim().toLowerCase() || DEFAULT_IMAGE_FETCH.mode;
  if (mode !== 'public' && mode !== 'any' && mode !== 'off') {
    throw new Error(`HANGAR_IMAGE_FETCH must be public (the default), any or off, got ${JSON.stringify(env.HANGAR_IMAGE_FETCH)}`);
  }
  const number = (name: string, fallback: number): number => {
    const raw = env[name];
    if (raw === undefined || raw.trim() === '') return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive whole number, got ${JSON.stringify(raw)}`);
    return value;
  };
  return { mode, maxBytes: number('HANGAR_IMAGE_MAX_BYTES', DEFAULT_IMAGE_FETCH.maxBytes), timeoutMs: number('HANGAR_IMAGE_FETCH_TIMEOUT_MS', DEFAULT_IMAGE_FETCH.timeoutMs) };
}

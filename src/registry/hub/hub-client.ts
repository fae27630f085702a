import { hubOffline } from '../../config/hub-settings.js';
import { HangarError } from '../../errors/hangar-error.js';
import type { ByteSource } from '../gguf-header.js';
import type { RepoFile } from './gguf-files.js';

const MiB = 1024 * 1024;
/** A repository's listing or a search: a large repo's listing is a few MiB. */
const MAX_JSON_BYTES = 32 * MiB;
/** A config, tokenizer config or template file: as local ones are read (regular-file.ts). */
const MAX_FILE_BYTES = 16 * MiB;

/** What the hub says of one repository at one revision. */
export interface RepoInfo {
  repo: string;
  /** The commit the revision points at: registrations pin it, so a launch fetches what was read. */
  sha: string;
  files: RepoFile[];
  /** The hub's own facts, where it gives them (`safetensors.total`, `gguf`, `downloads`, `pipeline_tag`). */
  raw: Record<string, unknown>;
}

/** Where the Hugging Face hub is and how to ask it; `env` is the service's, with a launch's `envs` over it. */
export interface HubClientOptions {
  env: Record<string, string | undefined>;
  /** Per request: a hub out of reach fails the launch or search in this long, never hangs it. */
  timeoutMs: number;
}

/**
 * The Hugging Face hub's HTTP API as huggingface_hub calls it (docs/registry.md, "The
 * hubs"): `GET /api/models/{repo}/revision/{rev}?blobs=true` for the files and sizes,
 * `GET /{repo}/resolve/{rev}/{file}` for a file, `GET /api/models?search=` for search.
 * `HF_ENDPOINT` moves it (a mirror, or a test's loopback stand-in), `HF_TOKEN` is sent
 * as a bearer token. Every failure is a HangarError naming the hub.
 */
export class HubClient {
  readonly endpoint: string;
  private readonly token: string | undefined;

  constructor(private readonly options: HubClientOptions) {
    this.endpoint = (options.env.HF_ENDPOINT || 'https://huggingface.co').replace(/\/+$/, '');
    this.token = options.env.HF_TOKEN || options.env.HUGGING_FACE_HUB_TOKEN || undefined;
  }

  get headers(): Record<string, string> {
    return this.token ? { authorization: `Bearer ${this.token}` } : {};
  }

  async repoInfo(repo: string, revision = 'main'): Promise<RepoInfo> {
    const raw = await this.json(`/api/models/${repoPath(repo)}/revision/${encodeURIComponent(revision)}?blobs=true`, repo);
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new HangarError('hub_error', [this.endpoint, 'not a JSON object', repo]);
    const info = raw as Record<string, unknown>;
    const siblings = Array.isArray(info.siblings) ? (info.siblings as Array<Record<string, unknown>>) : [];
    const files = siblings
      .filter((s) => typeof s.rfilename === 'string')
      .map((s) => ({ path: s.rfilename as string, size: numberOr0((s.lfs as Record<string, unknown> | undefined)?.size ?? s.size) }));
    // The hub's spelling of the id (its case), but never another repository: the id and the
    // commit become folders in the cache (snapshots/<sha>), so a hub's "../.." is refused here.
    const sameRepo = typeof info.id === 'string' && info.id.toLowerCase() === repo.toLowerCase();
    if (info.sha !== undefined && (typeof info.sha !== 'string' || !/^[0-9a-f]{40}$/.test(info.sha))) {
      throw new HangarError('hub_error', [this.endpoint, `a commit id that is not 40 hex digits (${JSON.stringify(info.sha).slice(0, 80)})`, repo]);
    }
    return { repo: sameRepo ? (info.id as string) : repo, sha: typeof info.sha === 'string' ? info.sha : revision, files, raw: info };
  }

  /** A file's URL at a revision (each path segment encoded: GGUF files may sit in a quantization's folder). */
  fileUrl(repo: string, revision: string, file: string): string {
    return `${this.endpoint}/${repoPath(repo)}/resolve/${encodeURIComponent(revision)}/${file.split('/').map(encodeURIComponent).join('/')}`;
  }

  /** A small JSON file of the repo; null when the repo has none. */
  async fileJson(repo: string, revision: string, file: string): Promise<Record<string, unknown> | null> {
    const text = await this.fileText(repo, revision, file);
    if (text === null) return null;
    try {
      const value = JSON.parse(text) as unknown;
      return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
    } catch {
      return null; // a malformed config says nothing; the load will say what is wrong with it
    }
  }

  async fileText(repo: string, revision: string, file: string): Promise<string | null> {
    const res = await this.get(this.fileUrl(repo, revision, file), repo);
    if (res.status === 404) return null;
    if (!res.ok) throw this.statusError(res, repo);
    return (await this.boundedBody(res, MAX_FILE_BYTES, `${file} of ${repo}`)).toString('utf8');
  }

  /**
   * The start of a file, read in order as a parser asks for it (a GGUF header), on one
   * request for its first `maxBytes` bytes: a hub that ignores the range still sends no
   * more than is read. `signal` ends it (a cancelled launch, a time limit).
   */
  async fileStart(repo: string, revision: string, file: string, maxBytes: number, signal: AbortSignal): Promise<ByteSource & { close(): void }> {
    const url = this.fileUrl(repo, revision, file);
    const res = await this.get(url, file, { signal, range: `bytes=0-${maxBytes - 1}` });
    if (!res.ok) throw this.statusError(res, `${file} of ${repo}`);
    const body = res.body?.getReader();
    let held = Buffer.alloc(0);
    let consumed = 0;
    return {
      async read(offset, length) {
        if (offset !== consumed) throw new Error(`fileStart reads in order (asked for ${offset}, at ${consumed})`);
        while (held.length < length && body) {
          const { done, value } = await body.read();
          if (done) break;
          held = held.length === 0 ? Buffer.from(value) : Buffer.concat([held, value]);
        }
        const out = held.subarray(0, length);
        held = held.subarray(out.length);
        consumed += out.length;
        return out;
      },
      close: () => void body?.cancel().catch(() => undefined),
    };
  }

  /** `GET /api/models` with the hub's own query parameters. */
  async search(params: URLSearchParams): Promise<unknown[]> {
    const found = await this.json(`/api/models?${params.toString()}`, 'the search');
    if (!Array.isArray(found)) throw new HangarError('hub_error', [this.endpoint, 'not a JSON list', 'the search']);
    return found;
  }

  private async json(pathAndQuery: string, what: string): Promise<unknown> {
    const res = await this.get(`${this.endpoint}${pathAndQuery}`, what);
    if (!res.ok) throw this.statusError(res, what);
    const body = await this.boundedBody(res, MAX_JSON_BYTES, what);
    try {
      return JSON.parse(body.toString('utf8'));
    } catch (err) {
      throw new HangarError('hub_error', [this.endpoint, `a body that is not JSON (${(err as Error).message})`, what]);
    }
  }

  /** A body read to its end, refused past `maxBytes` (a hub's 700 MB "config.json" held the control plane's memory). */
  private async boundedBody(res: Response, maxBytes: number, what: string): Promise<Buffer> {
    const declared = Number(res.headers.get('content-length'));
    if (declared > maxBytes) {
      await res.body?.cancel().catch(() => undefined);
      throw new HangarError('hub_error', [this.endpoint, `a body of ${declared} bytes, over the ${maxBytes / MiB} MiB read here`, what]);
    }
    const parts: Uint8Array[] = [];
    let size = 0;
    try {
      for await (const chunk of res.body ?? []) {
        size += chunk.length;
        if (size > maxBytes) {
          await res.body?.cancel().catch(() => undefined);
          throw new HangarError('hub_error', [this.endpoint, `a body over the ${maxBytes / MiB} MiB read here`, what]);
        }
        parts.push(chunk);
      }
    } catch (err) {
      if (err instanceof HangarError) throw err;
      throw this.unreachable(err, what);
    }
    return Buffer.concat(parts);
  }

  private async get(url: string, what: string, options: { signal?: AbortSignal; range?: string } = {}): Promise<Response> {
    // Offline mode (huggingface_hub's switch) means no request leaves the machine.
    if (hubOffline(this.options.env)) {
      throw new HangarError('hub_offline', [this.endpoint, what]);
    }
    const headers = options.range ? { ...this.headers, range: options.range } : this.headers;
    try {
      return await fetch(url, { headers, signal: options.signal ?? AbortSignal.timeout(this.options.timeoutMs), redirect: 'follow' });
    } catch (err) {
      throw this.unreachable(err, what);
    }
  }

  private unreachable(err: unknown, what: string): unknown {
    if ((err as Error).name === 'AbortError') return err; // cancelled by the caller: its own error stands
    const cause = (err as Error).cause as { code?: string; message?: string } | undefined;
    const why = (err as Error).name === 'TimeoutError' ? `no answer within ${this.options.timeoutMs / 1000} s` : (cause?.code ?? cause?.message ?? (err as Error).message);
    return new HangarError('hub_unreachable', [this.endpoint, `${why} (asking for ${what}; set HF_ENDPOINT for a mirror)`], { cause: err });
  }

  private statusError(res: Response, what: string): HangarError {
    const code = res.headers.get('x-error-code');
    if (code === 'GatedRepo' || res.status === 403 || (res.status === 401 && this.token)) {
      return new HangarError('hub_access_denied', [this.endpoint, what, this.token ? 'the token given may not read it' : 'give HF_TOKEN of an account that may'], { param: 'model_name' });
    }
    // The hub answers 401 for a repo that does not exist when asked without a token.
    if (res.status === 404 || res.status === 401 || code === 'RepoNotFound' || code === 'RevisionNotFound') {
      // Asked without a token, a private repo is "not found" too: said so, as huggingface_hub says it.
      const hint = !this.token && code !== 'RevisionNotFound' ? '; if it is a private or gated repository, set HF_TOKEN to a token of an account that may read it' : '';
      return new HangarError('hub_model_not_found', [what, this.endpoint, hint], { param: 'model_name' });
    }
    return new HangarError('hub_error', [this.endpoint, `HTTP ${res.status}`, what]);
  }
}

function repoPath(repo: string): string {
  return repo.split('/').map(encodeURIComponent).join('/');
}

function numberOr0(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0;
}

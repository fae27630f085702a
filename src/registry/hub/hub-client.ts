import { hubOffline } from '../../config/hub-settings.js';
import { HangarError } from '../../errors/hangar-error.js';
import type { RepoFile } from './gguf-files.js';

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
    return { repo: typeof info.id === 'string' ? info.id : repo, sha: typeof info.sha === 'string' ? info.sha : revision, files, raw: info };
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
    return res.text();
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
    try {
      return await res.json();
    } catch (err) {
      throw new HangarError('hub_error', [this.endpoint, `a body that is not JSON (${(err as Error).message})`, what]);
    }
  }

  private async get(url: string, what: string): Promise<Response> {
    // Offline mode (huggingface_hub's switch) means no request leaves the machine.
    if (hubOffline(this.options.env)) {
      throw new HangarError('hub_offline', [this.endpoint, what]);
    }
    try {
      return await fetch(url, { headers: this.headers, signal: AbortSignal.timeout(this.options.timeoutMs), redirect: 'follow' });
    } catch (err) {
      const cause = (err as Error).cause as { code?: string; message?: string } | undefined;
      const why = (err as Error).name === 'TimeoutError' ? `no answer within ${this.options.timeoutMs / 1000} s` : (cause?.code ?? cause?.message ?? (err as Error).message);
      throw new HangarError('hub_unreachable', [this.endpoint, `${why} (asking for ${what}; set HF_ENDPOINT for a mirror)`], { cause: err });
    }
  }

  private statusError(res: Response, what: string): HangarError {
    const code = res.headers.get('x-error-code');
    if (code === 'GatedRepo' || res.status === 403 || (res.status === 401 && this.token)) {
      return new HangarError('hub_access_denied', [this.endpoint, what, this.token ? 'the token given may not read it' : 'give HF_TOKEN of an account that may'], { param: 'model_name' });
    }
    // The hub answers 401 for a repo that does not exist when asked without a token.
    if (res.status === 404 || res.status === 401 || code === 'RepoNotFound' || code === 'RevisionNotFound') {
      return new HangarError('hub_model_not_found', [what, this.endpoint], { param: 'model_name' });
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

/**
 * `HANGAR_MODEL_SRC` (Xinference's `XINFERENCE_MODEL_SRC`): the hub a launch takes its
 * spec from when it names no `download_hub` (docs/registry.md, "The hubs").
 * - unset: the spec order of each family (Hugging Face first in the built-in catalog);
 * - `huggingface` or `modelscope`: that hub's spec where the family has one, else the other;
 * - `auto`: Hugging Face when its endpoint (`HF_ENDPOINT`) answers within 3 s, else
 *   ModelScope, as Xinference probes; the answer is kept for five minutes.
 */
import { hubOffline } from './hub-settings.js';

export type HubName = 'huggingface' | 'modelscope';
export type ModelSourceSetting = HubName | 'auto' | null;

const PROBE_MS = 3000;
const REMEMBER_MS = 5 * 60_000;

export function modelSourceFromEnv(env: NodeJS.ProcessEnv): ModelSourceSetting {
  const raw = env.HANGAR_MODEL_SRC?.trim().toLowerCase() ?? '';
  if (raw === '') return null;
  if (raw === 'huggingface' || raw === 'modelscope' || raw === 'auto') return raw;
  throw new Error(`HANGAR_MODEL_SRC must be huggingface, modelscope or auto, got ${JSON.stringify(env.HANGAR_MODEL_SRC)}`);
}

export class ModelSource {
  private probed: { hub: HubName; until: number } | null = null;

  constructor(
    private readonly setting: ModelSourceSetting,
    private readonly env: NodeJS.ProcessEnv = process.env,
    private readonly now: () => number = Date.now,
  ) {}

  /** The hub launches prefer now; null: each family's own order. */
  async preferred(): Promise<HubName | null> {
    if (this.setting !== 'auto') return this.setting;
    // Offline, no request leaves the machine: the cache has whatever was downloaded, from either hub.
    if (hubOffline(this.env)) return null;
    if (this.probed && this.probed.until > this.now()) return this.probed.hub;
    const endpoint = (this.env.HF_ENDPOINT || 'https://huggingface.co').replace(/\/+$/, '');
    // Any answer, even an error status, means the hub can be reached.
    const hub: HubName = await fetch(`${endpoint}/api/models?limit=1`, { method: 'HEAD', signal: AbortSignal.timeout(PROBE_MS) }).then(
      () => 'huggingface' as const,
      () => 'modelscope' as const,
    );
    this.probed = { hub, until: this.now() + REMEMBER_MS };
    return hub;
  }
}

import { useState, type FormEvent } from 'react';
import { getJson, postJson } from '../api/client';
import { ErrorBanner } from '../components/error-banner';
import { Tabs } from '../components/tabs';
import { MODEL_TYPES } from '../model-types';
import { LaunchProgress } from './launch-progress';

/** One result of `GET /v1/hub/models` (docs/registry.md, "Hub search"). */
interface Fit {
  memory_estimate: number;
  fits: boolean;
  fits_now: boolean;
}
export interface HubResult {
  id: string;
  model_name: string;
  downloads: number | null;
  likes: number | null;
  pipeline_tag: string | null;
  parameters: number | null;
  gguf: Array<{ quantization: string; files: string[]; bytes: number } & Fit>;
  default_quantization: string | null;
  pytorch: ({ bytes: number } & Fit) | null;
  error?: string;
}

/** The launch page's tabs: a tab per model type, and the hub. */
export const LAUNCH_TABS = [...MODEL_TYPES.map((t) => ({ key: t.type as string, label: t.label, to: `/ui/launch/${t.type}` })), { key: 'hub', label: 'From the hub', to: '/ui/launch/hub' }];

const size = (bytes: number) => (bytes >= 2 ** 30 ? `${(bytes / 2 ** 30).toFixed(1)} GiB` : `${Math.max(1, Math.round(bytes / 2 ** 20))} MiB`);
const count = (n: number | null) => (n === null ? '–' : n >= 1e9 ? `${(n / 1e9).toFixed(1)}B` : n >= 1e6 ? `${(n / 1e6).toFixed(1)}M` : n >= 1e3 ? `${(n / 1e3).toFixed(1)}K` : String(n));

/**
 * "From the hub": searches the hub through the service, shows each repository's files
 * with the memory estimate and whether it fits the budget, and launches one with a click
 * (`POST /v1/models` with `hf.co/<org>/<repo>[:<quantization>]`; the server picks the engine).
 */
export function HubPage() {
  const [search, setSearch] = useState('');
  const [format, setFormat] = useState<'' | 'gguf' | 'pytorch'>('');
  const [results, setResults] = useState<HubResult[] | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [launched, setLaunched] = useState<string | null>(null);

  const find = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const query = new URLSearchParams({ search: search.trim(), limit: '20', ...(format ? { format } : {}) });
      setResults((await getJson<{ data: HubResult[] }>(`/v1/hub/models?${query.toString()}`)).data);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  // The hub's tag says an embedding model or a reranker: launched as an LLM it was refused.
  const launch = async (modelName: string, pipelineTag: string | null) => {
    setError(null);
    const modelType = pipelineTag === 'sentence-similarity' || pipelineTag === 'feature-extraction' ? 'embedding' : pipelineTag === 'text-ranking' ? 'rerank' : 'LLM';
    try {
      setLaunched((await postJson<{ model_uid: string }>('/v1/models?wait_ready=false', { model_name: modelName, model_type: modelType })).model_uid);
    } catch (e) {
      setError(e);
    }
  };

  return (
    <section>
      <h1>Launch a model</h1>
      <Tabs label="Model types" current="hub" items={LAUNCH_TABS} />
      <form className="filters" onSubmit={(e) => void find(e)}>
        <label>
          Search the hub
          <input type="search" value={search} placeholder="e.g. qwen3 gguf" maxLength={200} onChange={(e) => setSearch(e.target.value)} />
        </label>
        <div className="field">
          <label htmlFor="hub-format">Format</label>
          <select id="hub-format" value={format} onChange={(e) => setFormat(e.target.value as typeof format)}>
            <option value="">Any</option>
            <option value="gguf">GGUF (llama.cpp)</option>
            <option value="pytorch">safetensors (Transformers, vLLM)</option>
          </select>
        </div>
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Searching…' : 'Search'}
        </button>
      </form>
      <ErrorBanner error={error} />
      {launched && <LaunchProgress uid={launched} type="LLM" onClose={() => setLaunched(null)} />}
      {results && results.length === 0 && <p className="empty">The hub has no model that matches.</p>}
      <ul className="hub-results">
        {(results ?? []).map((r) => (
          <li key={r.id} className="hub-result" data-repo={r.id}>
            <h2>{r.id}</h2>
            <p className="facts">
              {r.pipeline_tag ?? 'model'} · {count(r.downloads)} downloads{r.parameters !== null ? ` · ${count(r.parameters)} parameters` : ''}
            </p>
            {r.error && <p className="banner error">{r.error}</p>}
            <table>
              <thead>
                <tr>
                  <th>File</th>
                  <th>Size</th>
                  <th>Memory estimate</th>
                  <th>Fits</th>
                  <th aria-label="Launch" />
                </tr>
              </thead>
              <tbody>
                {r.gguf.map((q) => (
                  <tr key={q.quantization} data-quantization={q.quantization}>
                    <td>
                      GGUF {q.quantization}
                      {q.quantization === r.default_quantization && <span className="chip">default</span>}
                    </td>
                    <td>{size(q.bytes)}</td>
                    <td>{size(q.memory_estimate)}</td>
                    <td className={q.fits ? 'fits' : 'no-fit'}>{q.fits ? (q.fits_now ? 'fits' : 'fits once others unload') : 'does not fit'}</td>
                    <td>
                      <button type="button" onClick={() => void launch(`${r.model_name}:${q.quantization}`, r.pipeline_tag)} aria-label={`Launch ${r.id} ${q.quantization}`}>
                        Launch
                      </button>
                    </td>
                  </tr>
                ))}
                {r.pytorch && (
                  <tr data-quantization="pytorch">
                    <td>safetensors</td>
                    <td>{size(r.pytorch.bytes)}</td>
                    <td>{size(r.pytorch.memory_estimate)}</td>
                    <td className={r.pytorch.fits ? 'fits' : 'no-fit'}>{r.pytorch.fits ? (r.pytorch.fits_now ? 'fits' : 'fits once others unload') : 'does not fit'}</td>
                    <td>
                      <button type="button" onClick={() => void launch(r.model_name, r.pipeline_tag)} aria-label={`Launch ${r.id} safetensors`}>
                        Launch
                      </button>
                    </td>
                  </tr>
                )}
              </tbody>
            </table>
          </li>
        ))}
      </ul>
    </section>
  );
}

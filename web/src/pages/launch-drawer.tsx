import { useEffect, useRef, useState, type FormEvent } from 'react';
import { postJson } from '../api/client';
import { ErrorBanner } from '../components/error-banner';
import { KeyValueRows } from '../components/key-value-rows';
import type { ModelType } from '../model-types';
import { useFetch } from '../use-fetch';
import { LaunchProgress } from './launch-progress';
import { cascade, chosenEstimate, cliCommand, emptyForm, launchBody, settle, type EngineTable, type LaunchForm } from './launch-options';
import { formatBytes } from '../components/memory-bars';
import type { Registration } from './launch-page';

/** The launch form for one registration, then its live progress. */
export function LaunchDrawer({ type, registration, onClose }: { type: ModelType; registration: Registration; onClose: () => void }) {
  const name = registration.model_name;
  const engines = useFetch<EngineTable>(`/v1/engines/${encodeURIComponent(type)}/${encodeURIComponent(name)}`);
  const devices = useFetch<number>('/v1/cluster/devices');
  const [form, setForm] = useState<LaunchForm>(emptyForm);
  const [error, setError] = useState<unknown>(null);
  const [launched, setLaunched] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [kept, setKept] = useState<string | null>(null);
  const ref = useRef<HTMLDialogElement>(null);

  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => dialog?.close();
  }, []);
  useEffect(() => {
    if (engines.data !== undefined) setForm((f) => settle(engines.data ?? null, f));
  }, [engines.data]);

  const options = cascade(engines.data ?? null, form);
  const update = (patch: Partial<LaunchForm>) => setForm((f) => settle(engines.data ?? null, { ...f, ...patch }));
  const gpuCount = devices.data ?? 0;
  const estimate = chosenEstimate(engines.data ?? null, form);

  // The same launch, kept on the on-demand list: loaded when a request names it (docs/on-demand.md).
  const addOnDemand = async () => {
    setBusy(true);
    setError(null);
    try {
      const { model_uid } = await postJson<{ model_uid: string }>('/v1/on_demand/models', launchBody(type, name, form));
      setKept(model_uid);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const { model_uid } = await postJson<{ model_uid: string }>('/v1/models?wait_ready=false', launchBody(type, name, form));
      setLaunched(model_uid);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  return (
    <dialog ref={ref} className="drawer" aria-labelledby="drawer-title" onCancel={onClose}>
      <header>
        <h2 id="drawer-title">Launch {name}</h2>
        <button type="button" onClick={onClose} aria-label="Close">
          ×
        </button>
      </header>
      {launched ? (
        <LaunchProgress uid={launched} type={type} onClose={onClose} />
      ) : (
        <form onSubmit={submit}>
          <ErrorBanner error={engines.error} />
          {options.unusable.length > 0 && (
            <details className="unusable">
              <summary>{options.unusable.length} engine(s) cannot run here</summary>
              <ul>
                {options.unusable.map(([engine, reason]) => (
                  <li key={engine}>
                    <strong>{engine}</strong>: {reason}
                  </li>
                ))}
              </ul>
            </details>
          )}
          <div className="grid">
            <Select label="Engine" value={form.engine} options={options.engines} onChange={(engine) => update({ engine })} />
            <Select label="Format" value={form.format} options={options.formats} onChange={(format) => update({ format })} />
            <Select label="Size (billions)" value={form.size} options={options.sizes} onChange={(size) => update({ size })} />
            <Select label="Quantization" value={form.quantization} options={options.quantizations} onChange={(quantization) => update({ quantization })} />
            <label>
              Model uid
              <input value={form.uid} placeholder={name} onChange={(e) => update({ uid: e.target.value })} />
            </label>
            <label>
              Replicas
              <input type="number" min={1} value={form.replica} onChange={(e) => update({ replica: e.target.value })} />
            </label>
            <div className="field">
              <label htmlFor="launch-drawer-gpus-per-replica">GPUs per replica</label>
              <select id="launch-drawer-gpus-per-replica" value={form.nGpu} onChange={(e) => update({ nGpu: e.target.value })}>
                <option value="auto">auto</option>
                <option value="cpu">none (CPU)</option>
                {Array.from({ length: gpuCount }, (_, i) => (
                  <option key={i + 1}>{i + 1}</option>
                ))}
              </select>
            </div>
            <label>
              GPU indexes
              <input value={form.gpuIdx} placeholder="e.g. 0,1" inputMode="numeric" onChange={(e) => update({ gpuIdx: e.target.value })} />
            </label>
            <label>
              Request limit
              <input type="number" min={0} value={form.requestLimits} placeholder="none" onChange={(e) => update({ requestLimits: e.target.value })} />
            </label>
            <label>
              Keep alive
              <input value={form.keepAlive} placeholder="never (e.g. 5m, 0, -1)" onChange={(e) => update({ keepAlive: e.target.value })} />
            </label>
            <label className="checkbox">
              <input type="checkbox" checked={form.force} onChange={(e) => update({ force: e.target.checked })} />
              Launch even if it does not fit the memory budget
            </label>
            <label className="wide">
              Model path
              <input value={form.modelPath} placeholder="a local folder, instead of downloading" onChange={(e) => update({ modelPath: e.target.value })} />
            </label>
          </div>
          <KeyValueRows legend="Environment variables" pairs={form.envs} onChange={(envs) => update({ envs })} />
          <KeyValueRows legend="Extra parameters" pairs={form.extra} onChange={(extra) => update({ extra })} keyLabel="Parameter" />
          <div className="field wide">
            <label htmlFor="launch-drawer-command-line">Command line</label>
            <textarea id="launch-drawer-command-line" readOnly rows={2} className="cli" value={cliCommand(type, name, form, location.origin)} />
          </div>
          <p className="estimate" data-testid="memory-estimate">
            Memory estimate: {estimate === null ? 'unknown' : `about ${formatBytes(estimate)} per replica on CPU`}
          </p>
          <ErrorBanner error={error} />
          {kept && (
            <p className="banner" role="status">
              {kept} is on the on-demand list: a request that names it loads it.
            </p>
          )}
          <div className="actions">
            <button type="button" onClick={onClose}>
              Close
            </button>
            <button type="button" disabled={busy || engines.loading} onClick={() => void addOnDemand()}>
              Add on demand
            </button>
            <button type="submit" className="primary" disabled={busy || engines.loading}>
              {busy ? 'Launching…' : 'Launch'}
            </button>
          </div>
        </form>
      )}
    </dialog>
  );
}

function Select({ label, value, options, onChange }: { label: string; value: string; options: string[]; onChange: (value: string) => void }) {
  return (
    <div className="field">
      <label htmlFor={`field-${label.replace(/\W+/g, '-').toLowerCase()}`}>{label}</label>
      <select id={`field-${label.replace(/\W+/g, '-').toLowerCase()}`} value={value} disabled={options.length === 0} onChange={(e) => onChange(e.target.value)}>
        {options.length === 0 && <option value="">—</option>}
        {options.map((o) => (
          <option key={o}>{o}</option>
        ))}
      </select>
    </div>
  );
}

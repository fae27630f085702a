import { Fragment, useEffect, useState } from 'react';
import { del } from '../api/client';
import { ConfirmDialog } from '../components/confirm-dialog';
import { ErrorBanner } from '../components/error-banner';
import { MemoryBars, formatBytes } from '../components/memory-bars';
import { Tabs } from '../components/tabs';
import { MODEL_TYPES, type ModelType } from '../model-types';
import { Link } from '../router';
import { useFetch } from '../use-fetch';

/** One item of `GET /v1/models/instances` (contract §3.5). */
export interface Instance {
  model_uid: string;
  model_name: string;
  model_type: ModelType;
  model_engine?: string | null;
  model_ability: string[];
  replica: number;
  status: string;
  error_message?: string | null;
}

/** What `GET /v1/models` says of a running model's memory (docs/on-demand.md). */
interface Described {
  id: string;
  memory_estimate?: number | null;
  replica_memory?: Array<{ rss_bytes: number | null; gpu_memory_bytes: number | null }>;
  idle_seconds?: number;
  on_demand?: boolean;
  /** vLLM sleep mode: put to sleep to make room, woken by its next request. */
  sleeping?: boolean;
  keep_alive?: number;
  status?: string;
}

const REFRESH_MS = 2000;

function idleText(seconds: number | undefined): string {
  if (seconds === undefined) return '—';
  if (seconds < 60) return `${seconds}s`;
  return seconds < 3600 ? `${Math.floor(seconds / 60)}m` : `${Math.floor(seconds / 3600)}h${Math.floor((seconds % 3600) / 60)}m`;
}

/** Every instance (launching ones too), per type; details show replicas and events; terminate asks first. */
export function RunningPage({ type }: { type: ModelType | null }) {
  // A failed poll (the service restarting) keeps the last list under its error: the
  // tabs read "All (0)" as if every model were gone.
  const { data, error, reload } = useFetch<Instance[]>('/v1/models/instances', { keepOnError: true });
  const described = useFetch<{ data: Described[] }>('/v1/models', { keepOnError: true });
  const [open, setOpen] = useState<string | null>(null);
  const [confirming, setConfirming] = useState<Instance | null>(null);
  const [actionError, setActionError] = useState<unknown>(null);

  useEffect(() => {
    const timer = setInterval(() => {
      reload();
      described.reload();
    }, REFRESH_MS);
    return () => clearInterval(timer);
  }, [reload, described.reload]);
  const memoryOf = new Map((described.data?.data ?? []).map((d) => [d.id, d]));
  const onDemand = (described.data?.data ?? []).filter((d) => d.status === 'UNLOADED');

  const count = (t: ModelType) => (data ?? []).filter((i) => i.model_type === t).length;
  const shown = (data ?? []).filter((i) => type === null || i.model_type === type);

  const removeOnDemand = async (uid: string) => {
    setActionError(null);
    try {
      await del(`/v1/on_demand/models/${encodeURIComponent(uid)}`);
    } catch (e) {
      setActionError(e);
    }
    described.reload();
  };

  const terminate = async (instance: Instance) => {
    setConfirming(null);
    setActionError(null);
    try {
      await del(`/v1/models/${encodeURIComponent(instance.model_uid)}`);
    } catch (e) {
      setActionError(e);
    }
    reload();
  };

  return (
    <section>
      <h1>Running models</h1>
      <Tabs
        label="Model types"
        current={type ?? 'all'}
        items={[{ key: 'all', label: `All (${data?.length ?? 0})`, to: '/ui/running' }, ...MODEL_TYPES.map((t) => ({ key: t.type, label: `${t.label} (${count(t.type)})`, to: `/ui/running/${t.type}` }))]}
      />
      <ErrorBanner error={error ?? actionError} />
      <MemoryBars />
      {onDemand.length > 0 && (
        <div className="on-demand" data-testid="on-demand-unloaded">
          <h2>On demand, not loaded</h2>
          <p className="muted">A request that names one of these loads it.</p>
          <ul>
            {onDemand.map((d) => (
              <li key={d.id} data-uid={d.id}>
                <code>{d.id}</code>{' '}
                <button type="button" className="danger" onClick={() => void removeOnDemand(d.id)}>
                  Remove
                </button>
              </li>
            ))}
          </ul>
        </div>
      )}
      {data && shown.length === 0 && (
        <p className="empty">
          Nothing is running. <Link to={`/ui/launch/${type ?? 'LLM'}`}>Launch a model</Link>.
        </p>
      )}
      {shown.length > 0 && (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Uid</th>
                <th scope="col">Model</th>
                <th scope="col">Type</th>
                <th scope="col">Engine</th>
                <th scope="col">Replicas</th>
                <th scope="col">Status</th>
                <th scope="col">Memory (estimate / measured)</th>
                <th scope="col">Idle</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((i) => (
                <Fragment key={i.model_uid}>
                  <tr data-uid={i.model_uid}>
                    <td>
                      <code>{i.model_uid}</code>
                    </td>
                    <td>{i.model_name}</td>
                    <td>{i.model_type}</td>
                    <td>{i.model_engine ?? '—'}</td>
                    <td>{i.replica}</td>
                    <td>
                      <span className={`status ${i.status.toLowerCase()}`}>{i.status}</span>
                      {memoryOf.get(i.model_uid)?.on_demand && <span className="muted"> on demand</span>}
                      {memoryOf.get(i.model_uid)?.sleeping && <span className="muted"> asleep</span>}
                    </td>
                    <td className="memory">{memoryText(memoryOf.get(i.model_uid))}</td>
                    <td>{i.status === 'READY' ? idleText(memoryOf.get(i.model_uid)?.idle_seconds) : '—'}</td>
                    <td className="row-actions">
                      {i.status === 'READY' && (
                        <Link to={`/ui/try/${encodeURIComponent(i.model_uid)}`} className="button">
                          Try it
                        </Link>
                      )}
                      {i.status === 'READY' && (
                        <Link to={`/ui/dashboard/models/${encodeURIComponent(i.model_uid)}`} className="button" aria-label={`Charts of ${i.model_uid}`}>
                          Charts
                        </Link>
                      )}
                      <button type="button" aria-expanded={open === i.model_uid} onClick={() => setOpen(open === i.model_uid ? null : i.model_uid)}>
                        Details
                      </button>
                      <button type="button" className="danger" onClick={() => setConfirming(i)}>
                        Terminate
                      </button>
                    </td>
                  </tr>
                  {open === i.model_uid && (
                    <tr className="details">
                      <td colSpan={9}>
                        <InstanceDetails uid={i.model_uid} errorMessage={i.error_message ?? null} />
                      </td>
                    </tr>
                  )}
                </Fragment>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {confirming && (
        <ConfirmDialog
          title={`Terminate ${confirming.model_uid}?`}
          body="Every replica of this model stops, and requests in flight fail."
          confirm="Terminate"
          onConfirm={() => void terminate(confirming)}
          onCancel={() => setConfirming(null)}
        />
      )}
    </section>
  );
}

function memoryText(d: Described | undefined): string {
  if (!d) return '—';
  const estimate = typeof d.memory_estimate === 'number' ? formatBytes(d.memory_estimate * (d.replica_memory?.length || 1)) : '—';
  const measured = (d.replica_memory ?? []).reduce((sum, r) => sum + (r.rss_bytes ?? 0) + (r.gpu_memory_bytes ?? 0), 0);
  return `${estimate} / ${measured > 0 ? formatBytes(measured) : '—'}`;
}

interface Replica {
  replica_id: number;
  replica_model_uid: string;
  status: string;
  error_message?: string | null;
}
interface ModelEvent {
  event_type: string;
  event_ts: number;
  event_content: string;
}

function InstanceDetails({ uid, errorMessage }: { uid: string; errorMessage: string | null }) {
  const replicas = useFetch<Replica[]>(`/v1/models/${encodeURIComponent(uid)}/replicas`);
  const events = useFetch<ModelEvent[]>(`/v1/models/${encodeURIComponent(uid)}/events`);
  return (
    <div className="instance-details">
      {errorMessage && <p className="banner error">{errorMessage}</p>}
      <h3>Replicas</h3>
      <ErrorBanner error={replicas.error} />
      <ul>
        {(replicas.data ?? []).map((r) => (
          <li key={r.replica_id}>
            <code>{r.replica_model_uid}</code> <span className={`status ${r.status.toLowerCase()}`}>{r.status}</span>
            {r.error_message && <span className="muted"> {r.error_message}</span>}
          </li>
        ))}
      </ul>
      <h3>Events</h3>
      <ErrorBanner error={events.error} />
      <ol className="events">
        {(events.data ?? []).map((e, n) => (
          <li key={n} className={e.event_type.toLowerCase()}>
            <time dateTime={new Date(e.event_ts * 1000).toISOString()}>{new Date(e.event_ts * 1000).toLocaleTimeString()}</time> {e.event_type}: {e.event_content}
          </li>
        ))}
      </ol>
    </div>
  );
}

import { useEffect, useState } from 'react';
import { getJson, send } from '../api/client';
import { ErrorBanner } from '../components/error-banner';
import type { ModelType } from '../model-types';
import { Link } from '../router';

interface InstanceRecord {
  status: string;
  error_message?: string | null;
  replica_statuses?: Array<{ error_message?: string | null }>;
}

const POLL_MS = 500;

/** Follows a launch (`/instances` for the state, `/progress` for the bar) until READY or ERROR; can cancel it. */
export function LaunchProgress({ uid, type, onClose }: { uid: string; type: ModelType; onClose: () => void }) {
  const [status, setStatus] = useState('CREATING');
  const [progress, setProgress] = useState(0);
  const [failure, setFailure] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const done = status === 'READY' || status === 'ERROR' || status === 'TERMINATED';

  useEffect(() => {
    if (done) return;
    let stopped = false;
    const tick = async () => {
      try {
        const [instances, p] = await Promise.all([
          getJson<InstanceRecord[]>(`/v1/models/instances?model_uid=${encodeURIComponent(uid)}`),
          getJson<{ progress: number }>(`/v1/models/${encodeURIComponent(uid)}/progress`).catch(() => ({ progress: 0 })),
        ]);
        if (stopped) return;
        const record = instances[0];
        setProgress(record?.status === 'READY' ? 1 : p.progress);
        setStatus(record?.status ?? 'TERMINATED');
        const message = record?.error_message ?? record?.replica_statuses?.find((r) => r.error_message)?.error_message;
        if (message) setFailure(message);
      } catch (e) {
        if (!stopped) setError(e);
      }
    };
    void tick();
    const timer = setInterval(() => void tick(), POLL_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [uid, done]);

  const cancel = async () => {
    try {
      await send(`/v1/models/${encodeURIComponent(uid)}/cancel`, { method: 'POST' });
    } catch (e) {
      setError(e);
    }
  };

  const percent = Math.round(progress * 100);
  return (
    <div className="progress-panel">
      <p>
        <code>{uid}</code>: <span className={`status ${status.toLowerCase()}`} data-testid="launch-status">{status}</span>
      </p>
      <div className="bar" role="progressbar" aria-label="Launch progress" aria-valuemin={0} aria-valuemax={100} aria-valuenow={percent}>
        <div style={{ width: `${percent}%` }} />
      </div>
      <p>{percent}%</p>
      {failure && status !== 'READY' && (
        <p className="banner error" role="alert">
          {failure}
        </p>
      )}
      <ErrorBanner error={error} />
      <div className="actions">
        {!done && (
          <button type="button" className="danger" onClick={() => void cancel()}>
            Cancel launch
          </button>
        )}
        {status === 'READY' && (
          <>
            <Link to={`/ui/try/${encodeURIComponent(uid)}`} className="button primary">
              Try it
            </Link>
            <Link to={`/ui/running/${type}`} className="button">
              Running models
            </Link>
          </>
        )}
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
    </div>
  );
}

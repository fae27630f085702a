import { useEffect } from 'react';
import { useFetch } from '../use-fetch';

/** One device of `GET /v1/memory` (docs/on-demand.md). */
interface Device {
  device: string;
  budget_bytes: number | null;
  used_bytes: number;
  free_bytes: number;
  models: Array<{ model_uid: string; bytes: number }>;
}

const REFRESH_MS = 2000;

export function formatBytes(bytes: number): string {
  if (bytes >= 2 ** 30) return `${(bytes / 2 ** 30).toFixed(1)} GiB`;
  return `${Math.round(bytes / 2 ** 20)} MiB`;
}

/** A bar per device: the memory budget, what each model holds of it, what is free. */
export function MemoryBars() {
  const { data, reload } = useFetch<{ devices: Device[] }>('/v1/memory');
  useEffect(() => {
    const timer = setInterval(reload, REFRESH_MS);
    return () => clearInterval(timer);
  }, [reload]);
  if (!data) return null;
  return (
    <div className="memory-bars" aria-label="Memory budgets">
      {data.devices.map((d) => {
        const budget = d.budget_bytes ?? Math.max(d.used_bytes, 1);
        const label = d.device === 'cpu' ? 'Host memory' : d.device.toUpperCase();
        const summary = d.budget_bytes === null ? `${formatBytes(d.used_bytes)} held (no budget)` : `${formatBytes(d.used_bytes)} of ${formatBytes(d.budget_bytes)} (${formatBytes(d.free_bytes)} free)`;
        return (
          <div key={d.device} className="memory-device" data-device={d.device}>
            <div className="memory-label">
              <strong>{label}</strong> <span className="muted">{summary}</span>
            </div>
            <div className="bar stacked" role="meter" aria-label={`${label} budget`} aria-valuemin={0} aria-valuemax={budget} aria-valuenow={d.used_bytes}>
              {d.models.map((m) => (
                <div key={m.model_uid} style={{ width: `${Math.min(100, (100 * m.bytes) / budget)}%` }} title={`${m.model_uid}: ${formatBytes(m.bytes)}`} />
              ))}
            </div>
          </div>
        );
      })}
    </div>
  );
}

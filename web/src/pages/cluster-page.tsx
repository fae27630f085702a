import { ErrorBanner } from '../components/error-banner';
import { useFetch } from '../use-fetch';

interface Status {
  uptime: number;
  workers: Record<string, { update_time: number; status: Record<string, Record<string, number | string>> }>;
}
interface NodeInfo {
  node_type: string;
  ip_address: string;
  gpu_count: number;
  gpu_vram_total: number | string;
}

const gib = (bytes: number) => `${(bytes / 2 ** 30).toFixed(1)} GiB`;

/** `/status` (uptime, worker resources), `/v1/cluster/devices` and, for admins, nodes and version. */
export function ClusterPage() {
  const status = useFetch<Status>('/status');
  const devices = useFetch<number>('/v1/cluster/devices');
  const info = useFetch<NodeInfo[]>('/v1/cluster/info');
  const version = useFetch<{ version: string }>('/v1/cluster/version');
  return (
    <section>
      <h1>Cluster</h1>
      <ErrorBanner error={status.error} />
      {status.data && (
        <dl className="facts">
          <dt>Uptime</dt>
          <dd>{status.data.uptime} s</dd>
          <dt>GPUs</dt>
          <dd>{devices.error ? <ErrorBanner error={devices.error} /> : (devices.data ?? '…')}</dd>
          <dt>Version</dt>
          <dd>{version.data?.version ?? (version.error ? 'shown to admins' : '…')}</dd>
        </dl>
      )}
      <h2>Workers</h2>
      <div className="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Worker</th>
              <th scope="col">Device</th>
              <th scope="col">Usage</th>
              <th scope="col">Memory used</th>
              <th scope="col">Memory total</th>
            </tr>
          </thead>
          <tbody>
            {Object.entries(status.data?.workers ?? {}).flatMap(([address, worker]) =>
              Object.entries(worker.status).map(([device, s]) => (
                <tr key={`${address}-${device}`}>
                  <td>{address}</td>
                  <td>{device === 'cpu' ? `CPU (${s.total} cores)` : `GPU ${device}: ${s.name}`}</td>
                  <td>{typeof s.usage === 'number' ? `${Math.round(s.usage * 100)}%` : typeof s.gpu_util === 'number' ? `${s.gpu_util}%` : '—'}</td>
                  <td>{typeof s.memory_used === 'number' ? gib(s.memory_used) : typeof s.mem_used === 'number' ? gib(s.mem_used) : '—'}</td>
                  <td>{typeof s.memory_total === 'number' ? gib(s.memory_total) : typeof s.mem_total === 'number' ? gib(s.mem_total) : '—'}</td>
                </tr>
              )),
            )}
          </tbody>
        </table>
      </div>
      <h2>Nodes</h2>
      {info.error ? (
        <ErrorBanner error={info.error} />
      ) : (
        <ul>
          {(info.data ?? []).map((n, i) => (
            <li key={i}>
              {n.node_type} <code>{n.ip_address}</code>: {n.gpu_count} GPU(s)
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

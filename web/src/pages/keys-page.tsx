import { useState, type FormEvent } from 'react';
import { del, postJson } from '../api/client';
import { ConfirmDialog } from '../components/confirm-dialog';
import { ErrorBanner } from '../components/error-banner';
import { useFetch } from '../use-fetch';
import { KeyCreatedDialog } from './key-created-dialog';

interface Key {
  id: number;
  key_prefix: string;
  name: string;
  owner_username: string;
  enabled: boolean;
  expires_at: string | null;
  model_permissions: string[];
  limits: { rpm: number | null; tpm: number | null; max_parallel: number | null };
  last_used_at: string | null;
}
interface UsageRow {
  key_id: number;
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  errors: number;
}

const optionalNumber = (value: FormDataEntryValue | null): number | null => (value === null || value === '' ? null : Number(value));
const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : 'never');

/** API keys: create (shown once), see limits and the last 24 hours of usage, revoke. */
export function KeysPage() {
  const keys = useFetch<Key[]>('/v1/admin/keys');
  const [since] = useState(() => new Date(Date.now() - 24 * 3600_000).toISOString());
  const usage = useFetch<UsageRow[]>(`/v1/admin/usage?from=${encodeURIComponent(since)}`);
  const [created, setCreated] = useState<{ id: number; key: string; name: string } | null>(null);
  const [revoking, setRevoking] = useState<Key | null>(null);
  const [error, setError] = useState<unknown>(null);

  const totals = new Map<number, { requests: number; tokens: number; errors: number }>();
  for (const row of usage.data ?? []) {
    const t = totals.get(row.key_id) ?? { requests: 0, tokens: 0, errors: 0 };
    totals.set(row.key_id, { requests: t.requests + row.requests, tokens: t.tokens + row.prompt_tokens + row.completion_tokens, errors: t.errors + row.errors });
  }

  const create = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    // Kept before the await: React clears currentTarget once the handler has returned, and
    // the form kept the last key's name and models (a second click made a second key).
    const element = event.currentTarget;
    const form = new FormData(element);
    const models = String(form.get('models') ?? '').split(',').map((s) => s.trim()).filter(Boolean);
    const body: Record<string, unknown> = {
      name: form.get('name'),
      model_permissions: models,
      limits: { rpm: optionalNumber(form.get('rpm')), tpm: optionalNumber(form.get('tpm')), max_parallel: optionalNumber(form.get('max_parallel')) },
    };
    if (form.get('owner')) body.owner = form.get('owner');
    if (form.get('expires_at')) body.expires_at = new Date(String(form.get('expires_at'))).toISOString();
    setError(null);
    try {
      setCreated(await postJson('/v1/admin/keys', body));
      element.reset();
      keys.reload();
    } catch (e) {
      setError(e);
    }
  };

  const revoke = async (key: Key) => {
    setRevoking(null);
    try {
      await del(`/v1/admin/keys/${key.id}`);
      keys.reload();
    } catch (e) {
      setError(e);
    }
  };

  return (
    <section>
      <h1>API keys</h1>
      <ErrorBanner error={error ?? keys.error} />
      <form className="panel" onSubmit={(e) => void create(e)} aria-label="Create an API key">
        <div className="grid">
          <label>
            Name
            <input name="name" required maxLength={128} />
          </label>
          <label>
            Owner (empty: you)
            <input name="owner" />
          </label>
          <label>
            Requests per minute
            <input name="rpm" type="number" min={1} />
          </label>
          <label>
            Tokens per minute
            <input name="tpm" type="number" min={1} />
          </label>
          <label>
            Requests at once
            <input name="max_parallel" type="number" min={1} />
          </label>
          <label>
            Models (comma-separated; empty: all)
            <input name="models" />
          </label>
          <label>
            Expires
            <input name="expires_at" type="datetime-local" />
          </label>
        </div>
        <div className="actions">
          <button type="submit" className="primary">
            Create key
          </button>
        </div>
      </form>
      {keys.data?.length === 0 && <p className="empty">No API keys yet.</p>}
      {(keys.data?.length ?? 0) > 0 && (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Id</th>
                <th scope="col">Key</th>
                <th scope="col">Name</th>
                <th scope="col">Owner</th>
                <th scope="col">Limits (rpm / tpm / at once)</th>
                <th scope="col">Models</th>
                <th scope="col">Last 24 h</th>
                <th scope="col">Last used</th>
                <th scope="col">Expires</th>
                <th scope="col">
                  <span className="muted">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {keys.data!.map((k) => {
                const t = totals.get(k.id);
                return (
                  <tr key={k.id}>
                    {/* The usage charts name a key by its id ("key 6"). */}
                    <td>{k.id}</td>
                    <td>
                      <code>{k.key_prefix}…</code>
                      {!k.enabled && <span className="muted"> (disabled)</span>}
                    </td>
                    <td>{k.name}</td>
                    <td>{k.owner_username}</td>
                    <td>{[k.limits.rpm, k.limits.tpm, k.limits.max_parallel].map((v) => v ?? '—').join(' / ')}</td>
                    <td>{k.model_permissions.length ? k.model_permissions.join(', ') : 'all'}</td>
                    <td>{t ? `${t.requests} requests, ${t.tokens} tokens${t.errors ? `, ${t.errors} errors` : ''}` : '—'}</td>
                    <td>{when(k.last_used_at)}</td>
                    <td>{when(k.expires_at)}</td>
                    <td className="row-actions">
                      <button type="button" className="danger" onClick={() => setRevoking(k)}>
                        Revoke
                      </button>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      {created && <KeyCreatedDialog created={created} onClose={() => setCreated(null)} />}
      {revoking && (
        <ConfirmDialog
          title={`Revoke key ${revoking.name}?`}
          body={`Requests with ${revoking.key_prefix}… will be refused at once. This cannot be undone.`}
          confirm="Revoke"
          onConfirm={() => void revoke(revoking)}
          onCancel={() => setRevoking(null)}
        />
      )}
    </section>
  );
}

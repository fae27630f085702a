import { useState, type FormEvent } from 'react';
import { del, postJson, putJson } from '../api/client';
import { ConfirmDialog } from '../components/confirm-dialog';
import { ErrorBanner } from '../components/error-banner';
import { useFetch } from '../use-fetch';

interface User {
  id: number | null;
  username: string;
  source: 'local' | 'config';
  enabled: boolean;
  permissions: string[];
}

/** Users: the database's (create, disable, delete) and the auth config file's (read-only). */
export function UsersPage() {
  const users = useFetch<User[]>('/v1/admin/users');
  const [deleting, setDeleting] = useState<User | null>(null);
  const [error, setError] = useState<unknown>(null);

  const act = async (work: () => Promise<unknown>) => {
    setError(null);
    try {
      await work();
      users.reload();
    } catch (e) {
      setError(e);
    }
  };

  const create = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const target = event.currentTarget;
    const form = new FormData(target);
    const permissions = String(form.get('permissions') ?? '').split(',').map((s) => s.trim()).filter(Boolean);
    void act(async () => {
      await postJson('/v1/admin/users', { username: form.get('username'), password: form.get('password'), permissions });
      target.reset();
    });
  };

  return (
    <section>
      <h1>Users</h1>
      <ErrorBanner error={error ?? users.error} />
      <form className="panel" onSubmit={create} aria-label="Create a user">
        <div className="grid">
          <label>
            Username
            <input name="username" required maxLength={64} autoComplete="off" />
          </label>
          <label>
            Password (8 characters or more)
            <input name="password" type="password" required minLength={8} autoComplete="new-password" />
          </label>
          <label>
            Permissions (comma-separated)
            <input name="permissions" placeholder="models:list, models:read, keys:create" />
          </label>
        </div>
        <div className="actions">
          <button type="submit" className="primary">
            Create user
          </button>
        </div>
      </form>
      <div className="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Username</th>
              <th scope="col">Source</th>
              <th scope="col">Permissions</th>
              <th scope="col">Enabled</th>
              <th scope="col">
                <span className="muted">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {(users.data ?? []).map((u) => (
              <tr key={`${u.source}-${u.username}`}>
                <td>{u.username}</td>
                <td>{u.source === 'config' ? 'auth config file' : 'database'}</td>
                <td>{u.permissions.join(', ') || '—'}</td>
                <td>{u.enabled ? 'yes' : 'no'}</td>
                <td className="row-actions">
                  {u.id !== null && (
                    <>
                      <button type="button" onClick={() => void act(() => putJson(`/v1/admin/users/${u.id}`, { enabled: !u.enabled }))}>
                        {u.enabled ? 'Disable' : 'Enable'}
                      </button>
                      <button type="button" className="danger" onClick={() => setDeleting(u)}>
                        Delete
                      </button>
                    </>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {deleting && (
        <ConfirmDialog
          title={`Delete user ${deleting.username}?`}
          body="Their keys are revoked with them. This cannot be undone."
          confirm="Delete"
          onConfirm={() => {
            const id = deleting.id;
            setDeleting(null);
            void act(() => del(`/v1/admin/users/${id}`));
          }}
          onCancel={() => setDeleting(null)}
        />
      )}
    </section>
  );
}

import { useEffect, useState, type FormEvent } from 'react';
import { del, getJson, postJson, putJson } from '../api/client';
import { ConfirmDialog } from '../components/confirm-dialog';
import { ErrorBanner } from '../components/error-banner';
import { Tabs } from '../components/tabs';
import { MODEL_TYPES, type ModelType } from '../model-types';
import { Link, navigate } from '../router';
import { useFetch } from '../use-fetch';
import type { Registration } from './launch-page';
import { RegisterFields } from './register-fields';
import { editedDefinition, emptyForm, fromDefinition, toDefinition, type RegisterForm } from './register-definition';

/**
 * Register a custom model of a type (persisted), and list the custom ones with edit
 * and unregister. Editing replaces the registration in one step (PUT, docs/registry.md
 * "Replacing a registration"): a refusal leaves the old one as it was, and what the
 * form does not show is kept from it (editedDefinition).
 */
/**
 * A notice for the page an edit returns to: the page is built anew on every path
 * (app.tsx's PageErrorBoundary has the path as its key), so a notice set before
 * `navigate` was lost and a saved edit said nothing.
 */
let carriedNotice: string | null = null;
function takeCarriedNotice(): string | null {
  const notice = carriedNotice;
  carriedNotice = null;
  return notice;
}

export function RegisterPage({ type, editing }: { type: ModelType; editing: string | null }) {
  const customs = useFetch<Registration[]>(`/v1/model_registrations/${type}`);
  const [form, setForm] = useState<RegisterForm>(() => emptyForm(type));
  const [original, setOriginal] = useState<Record<string, unknown> | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState<string | null>(takeCarriedNotice);
  const [busy, setBusy] = useState(false);
  const [removing, setRemoving] = useState<string | null>(null);

  useEffect(() => {
    setError(null);
    if (!editing) {
      setForm(emptyForm(type));
      setOriginal(null);
      return;
    }
    getJson<Record<string, unknown>>(`/v1/model_registrations/${type}/${encodeURIComponent(editing)}`).then(
      (definition) => {
        setOriginal(definition);
        setForm(fromDefinition(type, definition));
      },
      setError,
    );
  }, [type, editing]);

  const register = (definition: unknown) => postJson(`/v1/model_registrations/${type}`, { model: JSON.stringify(definition), persist: true });

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    setNotice(null);
    const definition = editing && original ? editedDefinition(type, form, original) : toDefinition(type, form);
    try {
      if (editing && original) {
        await putJson(`/v1/model_registrations/${type}/${encodeURIComponent(editing)}`, { model: JSON.stringify(definition), persist: true });
      } else {
        await register(definition);
      }
      customs.reload();
      if (editing) {
        carriedNotice = `Saved ${String(definition.model_name)}.`;
        navigate(`/ui/register/${type}`);
      } else {
        setNotice(`Registered ${String(definition.model_name)}.`);
        setForm(emptyForm(type));
      }
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  const unregister = async (name: string) => {
    setRemoving(null);
    setError(null);
    setNotice(null);
    try {
      await del(`/v1/model_registrations/${type}/${encodeURIComponent(name)}`);
      if (editing === name) {
        carriedNotice = `Unregistered ${name}.`;
        navigate(`/ui/register/${type}`);
      } else setNotice(`Unregistered ${name}.`);
    } catch (e) {
      setError(e);
    }
    customs.reload();
  };

  const mine = (customs.data ?? []).filter((r) => !r.is_builtin);
  return (
    <section>
      <h1>Register a model</h1>
      <Tabs label="Model types" current={type} items={MODEL_TYPES.filter((t) => t.type !== 'video').map((t) => ({ key: t.type, label: t.label, to: `/ui/register/${t.type}` }))} />
      <div className="split">
        <form onSubmit={submit} className="register" aria-labelledby="register-title">
          <h2 id="register-title">{editing ? `Edit ${editing}` : `New ${type} model`}</h2>
          <RegisterFields type={type} form={form} onChange={setForm} lockName={editing !== null} />
          <details>
            <summary>Definition sent</summary>
            <pre>{JSON.stringify(editing && original ? editedDefinition(type, form, original) : toDefinition(type, form), null, 2)}</pre>
          </details>
          <ErrorBanner error={error} />
          {notice && (
            <p className="banner ok" role="status">
              {notice}
            </p>
          )}
          <div className="actions">
            {editing && (
              <Link to={`/ui/register/${type}`} className="button">
                Cancel edit
              </Link>
            )}
            <button type="submit" className="primary" disabled={busy}>
              {editing ? 'Save' : 'Register'}
            </button>
          </div>
        </form>
        <aside aria-labelledby="custom-title">
          <h2 id="custom-title">Custom {type} models</h2>
          <ErrorBanner error={customs.error} />
          {customs.data && mine.length === 0 && <p className="empty">None yet.</p>}
          <ul className="custom-list">
            {mine.map((r) => (
              <li key={r.model_name} data-model={r.model_name}>
                <span>{r.model_name}</span>
                <Link to={`/ui/register/${type}/${encodeURIComponent(r.model_name)}`} className="button">
                  Edit
                </Link>
                <button type="button" className="danger" onClick={() => setRemoving(r.model_name)}>
                  Unregister
                </button>
              </li>
            ))}
          </ul>
        </aside>
      </div>
      {removing && (
        <ConfirmDialog
          title={`Unregister ${removing}?`}
          body="The registration and its saved file are removed. Running instances keep running."
          confirm="Unregister"
          onConfirm={() => void unregister(removing)}
          onCancel={() => setRemoving(null)}
        />
      )}
    </section>
  );
}

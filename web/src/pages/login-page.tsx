import { useState, type FormEvent } from 'react';
import { ApiError } from '../api/api-error';
import { send } from '../api/client';
import { session } from '../api/session';

/**
 * Log in with a username and password (`POST /token` gives a JWT) or with an API key
 * (checked with one guarded call before it is kept: a 403 still proves the key).
 */
export function LoginPage() {
  const [mode, setMode] = useState<'password' | 'key'>('password');
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [apiKey, setApiKey] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      if (mode === 'password') {
        const response = await send('/token', { method: 'POST', body: JSON.stringify({ username, password }) });
        const { access_token } = (await response.json()) as { access_token: string };
        session.signIn(access_token);
      } else {
        // A header holds Latin-1 only: fetch threw its own words ("non ISO-8859-1 code point") for a pasted typo.
        if (!/^[\x21-\x7e]+$/.test(apiKey.trim())) throw new Error('An API key is letters, digits and - _ only (sk-…); this one holds other characters.');
        const response = await fetch('/v1/models', { headers: { authorization: `Bearer ${apiKey.trim()}` } });
        if (response.status === 401) throw new Error('This API key was not accepted.');
        session.signIn(apiKey.trim());
      }
    } catch (e) {
      setError(e instanceof ApiError || e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="login" id="main">
      <form onSubmit={submit} aria-labelledby="login-title">
        <h1 id="login-title">Log in to Hangar</h1>
        {session.wasRejected() && !error && (
          <p className="banner warn" role="status">
            Your session has ended or your credential was refused. Please log in again.
          </p>
        )}
        <div className="segmented" role="radiogroup" aria-label="Log in with">
          <label>
            <input type="radio" name="mode" checked={mode === 'password'} onChange={() => setMode('password')} /> Username and password
          </label>
          <label>
            <input type="radio" name="mode" checked={mode === 'key'} onChange={() => setMode('key')} /> API key
          </label>
        </div>
        {mode === 'password' ? (
          <>
            <label>
              Username
              <input name="username" autoComplete="username" required autoFocus value={username} onChange={(e) => setUsername(e.target.value)} />
            </label>
            <label>
              Password
              <input name="password" type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
            </label>
          </>
        ) : (
          <label>
            API key
            <input name="api_key" autoComplete="off" required placeholder="sk-…" value={apiKey} onChange={(e) => setApiKey(e.target.value)} />
          </label>
        )}
        {error && (
          <p className="banner error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Logging in…' : 'Log in'}
        </button>
      </form>
    </main>
  );
}

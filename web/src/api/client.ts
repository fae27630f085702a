import { ApiError } from './api-error';
import { session } from './session';

/**
 * Every call the page makes goes through here: the credential is added, and a 401
 * anywhere signs the user out so the login page comes back.
 */
export async function send(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  const credential = session.credential();
  if (credential) headers.set('authorization', `Bearer ${credential}`);
  if (typeof init.body === 'string' && !headers.has('content-type')) headers.set('content-type', 'application/json');
  const response = await fetch(path, { ...init, headers });
  if (response.ok) return response;
  const error = await ApiError.from(response);
  if (response.status === 401 && path !== '/token') session.rejected();
  throw error;
}

export async function getJson<T>(path: string, signal?: AbortSignal): Promise<T> {
  const response = await send(path, signal ? { signal } : {});
  return (await response.json()) as T;
}

export async function postJson<T>(path: string, body: unknown, signal?: AbortSignal): Promise<T> {
  const response = await send(path, { method: 'POST', body: JSON.stringify(body), ...(signal ? { signal } : {}) });
  return (await response.json()) as T;
}

export async function del(path: string): Promise<void> {
  await send(path, { method: 'DELETE' });
}

export async function putJson<T>(path: string, body: unknown): Promise<T> {
  const response = await send(path, { method: 'PUT', body: JSON.stringify(body) });
  return (await response.json()) as T;
}

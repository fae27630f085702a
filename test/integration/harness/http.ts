/** A tiny JSON client for tests: every call returns status, headers and the parsed body. */
export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export async function request<T = any>(baseUrl: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply<T>> {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
  }
  const res = await fetch(baseUrl + path, init);
  const text = await res.text();
  let parsed: unknown = undefined;
  try {
    parsed = text.length > 0 ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}

export function client(baseUrl: string) {
  return {
    get: <T = any>(path: string) => request<T>(baseUrl, 'GET', path),
    post: <T = any>(path: string, body?: unknown, headers?: Record<string, string>) => request<T>(baseUrl, 'POST', path, body ?? {}, headers),
    delete: <T = any>(path: string) => request<T>(baseUrl, 'DELETE', path),
  };
}

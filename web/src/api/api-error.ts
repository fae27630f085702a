/** A failed API call, read from the service's error body (contract §1). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** The catalog code (`error.code`), when the body had one. */
    readonly code: string | null,
    /** For 403: the permission the route needs, from `WWW-Authenticate: Bearer scope="..."`. */
    readonly scope: string | null,
  ) {
    super(message);
  }

  static async from(response: Response): Promise<ApiError> {
    const text = await response.text();
    let message = text || response.statusText;
    let code: string | null = null;
    try {
      const body = JSON.parse(text) as { detail?: unknown; error?: { code?: string; message?: string } };
      if (typeof body.detail === 'string') message = body.detail;
      else if (body.error?.message) message = body.error.message;
      code = body.error?.code ?? null;
    } catch {
      // Not JSON: keep the text, unless it is a page (a proxy's or gateway's error page):
      // its markup says nothing a person can read in a banner.
      if (/^\s*</.test(text) || (response.headers.get('content-type') ?? '').includes('html')) {
        message = `The service answered ${response.status} ${response.statusText} with a web page, not its own error (a proxy in between?)`;
      } else if (message.length > 500) {
        message = `${message.slice(0, 500)}…`;
      }
    }
    const scope = /scope="([^"]+)"/.exec(response.headers.get('www-authenticate') ?? '')?.[1] ?? null;
    return new ApiError(response.status, message, code, scope);
  }

  /**
   * What a person reads: the guard's bare 403 names the permission it lacks; any other
   * 403 says why in the server's words (another user's registration, a key limited to
   * other models, the launch variable that needs `models:code`), which a user who holds
   * the permission needs, and the scope after it when the server named one.
   */
  describe(): string {
    if (this.status !== 403) return this.message;
    if (this.code === 'permission_denied' || this.code === null) return `Not enough permissions${this.scope ? `: this needs \`${this.scope}\`` : ''}.`;
    return this.scope && !this.message.includes(this.scope) ? `${this.message} (this needs \`${this.scope}\`)` : this.message;
  }
}

import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

/**
 * Fastify's two lines per request (incoming, completed) at `debug` instead of `info`:
 * on the inference hot path they were a tenth of the control plane's CPU under load
 * (bench/gateway-overhead.ts, profiled with --cpu-prof). Errors keep their level;
 * `--log-level debug` brings the per-request lines back (pino's disabled levels are no-ops).
 */
export class DebugRequestLogs extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    if (this.isLogDisabled(request)) return;
    // Built only when it is written: this runs on every request.
    if (request.log.level !== 'debug' && request.log.level !== 'trace') return;
    const url = loggedUrl(request.url);
    request.log.debug({ req: { method: request.method, url, host: request.host, remoteAddress: request.ip, remotePort: request.socket?.remotePort } }, 'incoming request');
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    if (error) {
      reply.log.error({ res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
    } else {
      reply.log.debug({ res: reply, responseTime: reply.elapsedTime }, 'request completed');
    }
  }
}

/** Query parameters whose values are credentials (`?api_key=`, `?token=`, `?password=`). */
const SECRET_PARAM = /key|token|password|passwd|secret|auth|credential|signature/i;

/**
 * The URL as logged: a client that puts its key or password in the query string (every
 * such request is refused; the credential goes in a header) must not leave it in the log.
 */
export function loggedUrl(url: string): string {
  const cut = url.indexOf('?');
  if (cut < 0) return url;
  const query = url.slice(cut + 1).split('&').map((pair) => {
    const eq = pair.indexOf('=');
    let name = eq < 0 ? pair : pair.slice(0, eq);
    try {
      name = decodeURIComponent(name.replace(/\+/g, ' '));
    } catch {
      // A name that does not decode is judged as sent.
    }
    return eq >= 0 && SECRET_PARAM.test(name) ? `${pair.slice(0, eq)}=[redacted]` : pair;
  });
  return `${url.slice(0, cut)}?${query.join('&')}`;
}

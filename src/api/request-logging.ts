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
    request.log.debug({ req: request }, 'incoming request');
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

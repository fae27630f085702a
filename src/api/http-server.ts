import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { HangarError, errorBody } from '../errors/hangar-error.js';

/**
 * Node's answer to a connection that broke HTTP before a request existed (a body
 * that did not arrive in time, garbage, oversized headers), in the contract's error
 * shape instead of fastify's own, then the connection is closed: a request half
 * read leaves nothing on it that could be trusted for the next one.
 */
export function clientErrorHandler(timeoutMs: number) {
  return (err: NodeJS.ErrnoException, socket: Socket): void => {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const error = err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? new HangarError('request_timeout', [Math.round(timeoutMs / 100) / 10])
      : new HangarError('bad_http_request', [err.code === 'HPE_HEADER_OVERFLOW' ? 'its headers are too large' : 'malformed request']);
    const body = JSON.stringify(errorBody(error));
    if (socket.writable) {
      socket.write(`HTTP/1.1 ${error.status} ${error.status === 408 ? 'Request Timeout' : 'Bad Request'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    }
    socket.destroy();
  };
}

/**
 * The HTTP server, made here so that Node's own options reach it (fastify passes
 * `requestTimeout` but not `connectionsCheckingInterval`): Node checks the request
 * timeout only that often (30 s by default), which would let a trickled body live half
 * a minute past it. The keep-alive timeout is fastify's default (72 s), which outlives
 * the idle timeouts of the usual load balancers.
 */
export function httpServer(handler: (req: IncomingMessage, res: ServerResponse) => void, requestTimeoutMs: number): Server {
  const server = createServer({ requestTimeout: requestTimeoutMs, connectionsCheckingInterval: Math.min(5000, Math.max(250, requestTimeoutMs / 4)) }, handler);
  server.keepAliveTimeout = 72_000;
  return server;
}

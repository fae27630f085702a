import type { FastifyInstance } from 'fastify';
import { HangarError } from '../errors/hangar-error.js';
import { whenRequestDone } from './request-done.js';

export interface Drain {
  /** From now on new requests get 503; those in flight go on. */
  start(): void;
  /** Resolves when no request is in flight, or after `timeoutMs`; true when all finished. */
  idle(timeoutMs: number): Promise<boolean>;
  /** Ends the wait of `idle` now, as its timeout would (a second Ctrl-C). */
  cutShort(): void;
  readonly inFlight: number;
}

declare module 'fastify' {
  interface FastifyInstance {
    drain: Drain;
  }
}

/**
 * Graceful shutdown's first half: stop taking new work while the work in flight
 * (streams included) finishes. A request counts until its response is closed —
 * finished or aborted by the client — so a drain never waits on a client that left.
 */
export function installDrain(app: FastifyInstance): void {
  let draining = false;
  let inFlight = 0;
  let onIdle: (() => void) | null = null;
  let onCut: (() => void) | null = null;

  app.addHook('onRequest', async (request, reply) => {
    if (draining && request.routeOptions.url !== '/status') {
      throw new HangarError('server_draining', [], { headers: { 'retry-after': '5', connection: 'close' } });
    }
    inFlight++;
    whenRequestDone(reply, () => {
      inFlight--;
      if (inFlight === 0) onIdle?.();
    });
  });

  app.decorate('drain', {
    start() {
      draining = true;
    },
    idle(timeoutMs: number) {
      if (inFlight === 0) return Promise.resolve(true);
      return new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), timeoutMs);
        onIdle = () => {
          clearTimeout(timer);
          resolve(true);
        };
        onCut = () => {
          clearTimeout(timer);
          resolve(false);
        };
      });
    },
    cutShort() {
      onCut?.();
    },
    get inFlight() {
      return inFlight;
    },
  } satisfies Drain);
}

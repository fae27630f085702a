import type { FastifyInstance } from 'fastify';
import type { Permission } from '../auth/permissions.js';
import './auth/route-permission.js';

export interface RouteEntry {
  method: string;
  url: string;
  /** Declared permission; undefined means the guard asks for `admin`. */
  permission: Permission | undefined;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route as registered, for the auth table in docs and the test that walks it. */
    routeTable: RouteEntry[];
  }
}

/** Records each route as it is added; install before any route. */
export function installRouteTable(app: FastifyInstance): void {
  const table: RouteEntry[] = [];
  app.decorate('routeTable', table);
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) table.push({ method, url: route.url, permission: route.config?.permission });
  });
}

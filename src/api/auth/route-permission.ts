import type { Permission } from '../../auth/permissions.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The permission a route needs when auth is on, declared once next to the route.
     * A route that declares none needs `admin`: forgetting it fails closed.
     */
    permission?: Permission;
  }
}

/** Route options fragment: `{ config: { permission } }`. */
export function needs(permission: Permission): { config: { permission: Permission } } {
  return { config: { permission } };
}

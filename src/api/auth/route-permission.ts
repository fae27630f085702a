import type { Permission } from '../../auth/permissions.js';
import type { ModelType } from '../../registry/index.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The permission a route needs when auth is on, declared once next to the route.
     * A route that declares none needs `admin`: forgetting it fails closed.
     */
    permission?: Permission;
    /**
     * The model types an inference route serves. A request naming an on-demand entry of
     * another type is refused before the entry loads (model-lease.ts), not after.
     */
    modelTypes?: readonly ModelType[];
  }
}

/** Route options fragment: `{ config: { permission } }`, and the model types an inference route serves. */
export function needs(permission: Permission, modelTypes?: readonly ModelType[]): { config: { permission: Permission; modelTypes?: readonly ModelType[] } } {
  return { config: modelTypes ? { permission, modelTypes } : { permission } };
}

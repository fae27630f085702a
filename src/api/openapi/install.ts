import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { SECURITY_SCHEMES, documentRoute, withoutSecurity } from './route-document.js';

/**
 * The OpenAPI 3.0 document, generated from the routes' zod schemas (never written by
 * hand; route-document.ts adds what fastify does not validate): the browsable page at
 * /docs, the document at /openapi.json and /docs/json. Must be installed before the
 * routes so it sees them. A test validates it with an OpenAPI validator.
 *
 * `authEnabled`: whether operations ask for a credential. Auth can turn on while the
 * service runs (the first database user), so /openapi.json decides per request.
 */
export async function installOpenApi(app: FastifyInstance, version: string, authEnabled: () => boolean): Promise<void> {
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: 'Hangar', description: 'Model inference service speaking the Xinference 2.0 and OpenAI wire contracts', version },
      components: { securitySchemes: SECURITY_SCHEMES },
    },
    transform: documentRoute,
    transformObject: jsonSchemaTransformObject,
  });
  await app.register(fastifySwaggerUi, { routePrefix: '/docs' });
  let open: Record<string, unknown> | null = null;
  app.get('/openapi.json', { schema: { hide: true } }, async () => {
    const document = app.swagger() as unknown as Record<string, unknown>;
    if (authEnabled()) return document;
    open ??= withoutSecurity(document);
    return open;
  });
}

import formbody from '@fastify/formbody';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Authenticator } from '../../auth/authenticator.js';
import { HangarError } from '../../errors/hangar-error.js';

const tokenBody = z.object({
  username: z.string({ error: 'Invalid input. Please specify the `username` field.' }),
  password: z.string({ error: 'Invalid input. Please specify the `password` field.' }),
});

/**
 * POST /token (contract §6): JSON as Xinference's client sends it, or form-encoded as
 * OAuth2 password-flow clients send it.
 */
export const tokenRoute: FastifyPluginAsync<{ authenticator: Authenticator }> = async (fastify, { authenticator }) => {
  await fastify.register(formbody);
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  app.post('/token', { schema: { body: tokenBody, tags: ['auth'] } }, async (request) => {
    if (!authenticator.enabled) throw new HangarError('auth_disabled');
    const token = await authenticator.login(request.body.username, request.body.password);
    if (!token) throw new HangarError('incorrect_login', [], { headers: { 'www-authenticate': 'Bearer' } });
    return { access_token: token, token_type: 'bearer' };
  });
};

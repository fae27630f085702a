import type { FastifyRequest } from 'fastify';

/**
 * Whose a request's own things are (stored responses, requests in flight): the user
 * it came as (a key's owner, a token's user); '' while auth is off, when everything
 * is one owner's.
 */
export const ownerOf = (request: FastifyRequest): string => request.principal?.username ?? '';

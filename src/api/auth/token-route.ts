import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AccessControl } from '../../auth/access-control.js';
import { LoginThrottle } from '../../auth/login-throttle.js';
import { HangarError } from '../../errors/hangar-error.js';

const tokenBody = z.object({
  username: z.string({ error: 'Invalid input. Please specify the `username` field.' }),
  password: z.string({ error: 'Invalid input. Please specify the `password` field.' }),
});

/**
 * POST /token (contract §6): JSON as Xinference's client sends it, or form-encoded as
 * OAuth2 password-flow clients send it (read as its fields by json-body.ts). Failures are throttled per username and per
 * client address (login-throttle.ts) and written to the audit log.
 */
export const tokenRoute: FastifyPluginAsync<{ access: AccessControl; throttle?: LoginThrottle }> = async (fastify, { access, throttle = new LoginThrottle() }) => {
  const { authenticator, audit } = access;
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  app.post('/token', { schema: { body: tokenBody, tags: ['auth'] } }, async (request, reply) => {
    // A token answer is kept by no cache (RFC 6749, 5.1): a shared proxy's copy is a login.
    reply.header('cache-control', 'no-store');
    if (!authenticator.enabled) throw new HangarError('auth_disabled');
    const { username, password } = request.body;
    const address = request.ip;
    const refused = throttle.check(username, address, access.now());
    if (refused) {
      throw new HangarError(refused.locked ? 'login_locked' : 'login_throttled', [refused.retryAfterS], { headers: { 'retry-after': String(refused.retryAfterS) } });
    }
    const answered = throttle.begin(username, address);
    let token: string | null;
    try {
      token = await authenticator.login(username, password);
    } finally {
      answered();
    }
    if (!token) {
      const now = access.now();
      const { failures, locked } = throttle.failed(username, address, now);
      // Nobody is authenticated yet: the actor is no one, so `?actor=admin` shows only what
      // admin did. The name tried is the target, as typed unless it is a key pasted into
      // the username box (then only its prefix), with control characters written out.
      audit.record(UNAUTHENTICATED, locked ? 'auth.login.locked' : 'auth.login.failed', triedName(username), { address, failures }, new Date(now));
      throw new HangarError('incorrect_login', [], { headers: { 'www-authenticate': 'Bearer' } });
    }
    throttle.succeeded(username);
    return { access_token: token, token_type: 'bearer' };
  });
};

const UNAUTHENTICATED = '(unauthenticated)';

function triedName(username: string): string {
  // Control and invisible formatting characters (a right-to-left override would show
  // another name in whatever displays the log) are escaped, as key names refuse them.
  const plain = username.replace(/[\u0000-\u001f\u007f-\u009f\p{Cf}]/gu, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return /^sk-/i.test(username) || username.length > 64 ? `${plain.slice(0, 6)}... (${username.length} characters, not kept: it looks like a key)` : plain;
}

import { describe, expect, it } from 'vitest';
import { ApiError } from '../../web/src/api/api-error.js';

const refusal = (code: string, message: string, scope: string | null) =>
  ApiError.from(new Response(JSON.stringify({ detail: message, error: { message, type: 'permission_error', param: null, code } }), { status: 403, headers: scope ? { 'www-authenticate': `Bearer scope="${scope}"` } : {} }));

// What the web UI shows for a 403 (web/src/api/api-error.ts).
describe('the web UI\'s words for a refusal', () => {
  it('names the missing permission for the guard\'s bare refusal, and keeps the server\'s reason for every other 403', async () => {
    expect((await refusal('permission_denied', 'Not enough permissions', 'models:start')).describe()).toBe('Not enough permissions: this needs `models:start`.');
    // A user who holds the permission was sent to ask for it: the reason was another user's registration.
    const owner = await refusal('registration_not_owner', 'Model tiny-llm was registered by another user; only its owner or an admin may replace or unregister it', null);
    expect(owner.describe()).toBe('Model tiny-llm was registered by another user; only its owner or an admin may replace or unregister it');
    const code = await refusal('code_power_required', 'Not enough permissions: this runs code of your choosing on the server, which needs `models:code`: launch envs LD_PRELOAD', 'models:code');
    expect(code.describe()).toContain('launch envs LD_PRELOAD');
    const key = await refusal('key_model_denied', 'This API key may not use model zz', null);
    expect(key.describe()).toBe('This API key may not use model zz');
  });
});

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthConfigError, loadAuthConfig } from '../../src/auth/auth-config.js';
import { upstreamAuthConfig } from '../fixtures/auth-users.js';

describe('loadAuthConfig', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'hangar-auth-'));
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  async function load(content: unknown): Promise<unknown> {
    const file = path.join(dir, `c${Math.random().toString(36).slice(2)}.json`);
    await writeFile(file, typeof content === 'string' ? content : JSON.stringify(content));
    return loadAuthConfig(file);
  }

  it('reads the upstream fixture with defaults filled', async () => {
    const config = (await load(upstreamAuthConfig())) as any;
    expect(config.auth_config).toMatchObject({ algorithm: 'HS256', enforce_expiry: false });
    expect(config.user_config).toHaveLength(3);
  });

  it('accepts 2.12 permission names', async () => {
    const c = upstreamAuthConfig();
    c.user_config[1]!.permissions = ['models:write', 'models:register'];
    await expect(load(c)).resolves.toBeTruthy();
  });

  const base = upstreamAuthConfig;
  it.each<[string, () => unknown, RegExp]>([
    ['not JSON', () => '{"auth_config": ', /not valid JSON/],
    ['a bad algorithm', () => ({ ...base(), auth_config: { ...base().auth_config, algorithm: 'RS256' } }), /auth_config\.algorithm: must be one of HS256, HS384, HS512/],
    ['an empty secret', () => ({ ...base(), auth_config: { ...base().auth_config, secret_key: '' } }), /auth_config\.secret_key: must not be empty/],
    ['a short secret', () => ({ ...base(), auth_config: { ...base().auth_config, secret_key: 'abc123' } }), /auth_config\.secret_key: must be at least 32 characters/],
    ['a missing secret', () => ({ ...base(), auth_config: { algorithm: 'HS256' } }), /auth_config\.secret_key/],
    ['a malformed key', () => { const c = base(); c.user_config[0]!.api_keys = ['sk-short']; return c; }, /user_config\.0\.api_keys\.0: an API key must be 'sk-' followed by 13/],
    ['a key listed twice for one user', () => { const c = base(); c.user_config[1]!.api_keys = ['sk-72tkvudyGLPMi', 'sk-72tkvudyGLPMi']; return c; }, /user_config\.1\.api_keys\.1: this API key is already listed/],
    ['a key listed for two users', () => { const c = base(); c.user_config[2]!.api_keys = ['sk-72tkvudyGLPMi']; return c; }, /user_config\.2\.api_keys\.0: .*already listed \(for user "user2"\)/],
    ['an unknown permission', () => { const c = base(); c.user_config[1]!.permissions = ['models:fly']; return c; }, /user_config\.1\.permissions\.0: unknown permission "models:fly"/],
    ['a duplicate username', () => { const c = base(); c.user_config[2]!.username = 'user1'; return c; }, /user_config\.2\.username: duplicate username "user1"/],
    ['no users', () => ({ ...base(), user_config: [] }), /user_config: must list at least one user/],
    ['a user without password', () => { const c: any = base(); delete c.user_config[0].password; return c; }, /user_config\.0\.password/],
  ])('refuses %s, naming the field and rule', async (_name, content, message) => {
    const err = await load(content()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AuthConfigError);
    expect((err as Error).message).toMatch(message);
  });

  it('refuses a missing file', async () => {
    await expect(loadAuthConfig(path.join(dir, 'nope.json'))).rejects.toThrow(/does not exist/);
  });

  it('never puts a key in its messages', async () => {
    const c = base();
    c.user_config[2]!.api_keys = ['sk-72tkvudyGLPMi'];
    const err = (await load(c).catch((e: unknown) => e)) as Error;
    expect(err.message).not.toContain('sk-72tkvudyGLPMi');
  });
});

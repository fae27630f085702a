import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { ACCEPTED_PERMISSION_NAMES } from './permissions.js';
import { jsonSyntaxReason } from '../config/json-syntax.js';

/** Start-up refuses the file with this; the message names the field and the rule. */
export class AuthConfigError extends Error {
  constructor(file: string, message: string) {
    super(`auth config ${file}: ${message}`);
    this.name = 'AuthConfigError';
  }
}

export const API_KEY_PATTERN = /^sk-[A-Za-z0-9]{13}$/;
// HS256 signs with a 256-bit key; a shorter secret can be brute-forced offline from any
// token. 32 characters is what `openssl rand -hex 16` gives; the README suggests -hex 32.
const MIN_SECRET_LENGTH = 32;

const userSchema = z.object({
  username: z.string().min(1, 'must not be empty'),
  password: z.string().min(1, 'must not be empty'),
  permissions: z.array(
    z.string().refine((p) => ACCEPTED_PERMISSION_NAMES.has(p), {
      error: (i) => `unknown permission ${JSON.stringify(i.input)}; known: ${[...ACCEPTED_PERMISSION_NAMES].join(', ')}`,
    }),
  ),
  api_keys: z.array(
    z.string().regex(API_KEY_PATTERN, "an API key must be 'sk-' followed by 13 letters or digits (16 characters in all)"),
  ),
});

const fileSchema = z.object({
  auth_config: z.object({
    algorithm: z.enum(['HS256', 'HS384', 'HS512'], { error: 'must be one of HS256, HS384, HS512' }).default('HS256'),
    secret_key: z
      .string({ error: 'is required' })
      .min(1, 'must not be empty')
      .min(MIN_SECRET_LENGTH, `must be at least ${MIN_SECRET_LENGTH} characters (generate one with \`openssl rand -hex 32\`)`),
    token_expire_in_minutes: z.number().int().positive().default(30),
    enforce_expiry: z.boolean().default(false),
  }),
  user_config: z.array(userSchema).min(1, 'must list at least one user'),
});

export type AuthConfig = z.infer<typeof fileSchema>;
export type UserConfig = z.infer<typeof userSchema>;

/** Reads and checks an auth config file (contract §6). Throws AuthConfigError naming what is wrong. */
export async function loadAuthConfig(file: string): Promise<AuthConfig> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new AuthConfigError(file, code === 'ENOENT' ? 'the file does not exist' : `the file cannot be read (${code ?? String(err)})`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new AuthConfigError(file, `not valid JSON: ${jsonSyntaxReason(err)}`);
  }
  const parsed = fileSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length > 0 ? issue.path.join('.') : '(top level)';
    throw new AuthConfigError(file, `${where}: ${issue.message}`);
  }
  checkUniqueness(file, parsed.data);
  return parsed.data;
}

function checkUniqueness(file: string, config: AuthConfig): void {
  const users = new Set<string>();
  const keys = new Map<string, string>();
  config.user_config.forEach((user, i) => {
    if (users.has(user.username)) throw new AuthConfigError(file, `user_config.${i}.username: duplicate username ${JSON.stringify(user.username)}`);
    users.add(user.username);
    user.api_keys.forEach((key, j) => {
      const owner = keys.get(key);
      if (owner !== undefined) {
        // The key itself is a secret: say where the duplicate is, not what it is.
        throw new AuthConfigError(file, `user_config.${i}.api_keys.${j}: this API key is already listed (for user ${JSON.stringify(owner)}); every key must be unique`);
      }
      keys.set(key, user.username);
    });
  });
}

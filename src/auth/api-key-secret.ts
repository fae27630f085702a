import { randomBytes } from 'node:crypto';
import { digest } from './secret-digest.js';

/**
 * Database API keys: `sk-` and 48 letters or digits (285 bits), so they cannot be
 * mistaken for the 16-character keys of an auth config file and cannot be guessed.
 * Only a SHA-256 digest is stored: a key is random, not a password, so a slow hash
 * adds nothing and would cost every request. The first 12 characters are kept in
 * clear as the key's prefix, to show in lists and to find the candidate row.
 */
export const DATABASE_KEY_PATTERN = /^sk-[A-Za-z0-9]{48}$/;
export const KEY_PREFIX_LENGTH = 12;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export interface NewKeySecret {
  key: string;
  prefix: string;
  hash: Buffer;
}

export function newKeySecret(): NewKeySecret {
  let body = '';
  while (body.length < 48) {
    for (const byte of randomBytes(64)) {
      // 248 = 4 × 62: rejecting the rest keeps every character equally likely.
      if (byte < 248 && body.length < 48) body += ALPHABET[byte % 62];
    }
  }
  const key = `sk-${body}`;
  return { key, prefix: keyPrefix(key), hash: digest(key) };
}

export function keyPrefix(key: string): string {
  return key.slice(0, KEY_PREFIX_LENGTH);
}

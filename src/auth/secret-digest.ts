import { hash, timingSafeEqual } from 'node:crypto';

/**
 * Secrets are kept as SHA-256 digests and compared with timingSafeEqual: digests have
 * one length whatever was typed, so neither the comparison's time nor an early length
 * check tells an attacker how close a guess was.
 */
export function digest(secret: string): Buffer {
  // The one-shot hash: a createHash object per request showed in the auth benchmark's profile.
  return hash('sha256', secret, 'buffer');
}

export function sameDigest(a: Buffer, b: Buffer): boolean {
  return timingSafeEqual(a, b);
}

/**
 * Two strings compared in time that depends on their length only (every character is
 * looked at; no early exit). For a credential against one this connection presented
 * before: key formats have fixed lengths, so the length tells nothing.
 */
export function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

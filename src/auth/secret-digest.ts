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

import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Secrets are kept as SHA-256 digests and compared with timingSafeEqual: digests have
 * one length whatever was typed, so neither the comparison's time nor an early length
 * check tells an attacker how close a guess was.
 */
export function digest(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

export function sameDigest(a: Buffer, b: Buffer): boolean {
  return timingSafeEqual(a, b);
}

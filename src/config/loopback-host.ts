import { isIPv4, isIPv6 } from 'node:net';

/**
 * Whether `--host` keeps the service on this machine: 127.0.0.0/8, ::1 or `localhost`.
 * Anything else (0.0.0.0, ::, a LAN address, a name) lets others reach it.
 */
export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (isIPv4(h)) return h.startsWith('127.');
  if (isIPv6(h)) return h === '::1' || /^::ffff:127\./.test(h);
  return false;
}

import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger };

/**
 * Paths pino blanks before a line is written. Secrets must never reach a log:
 * credentials in headers, passwords in login bodies, and the env vars a user hands
 * a runtime (they often hold tokens).
 */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  "req.headers['x-api-key']",
  "headers['x-api-key']",
  'req.headers.cookie',
  'headers.authorization',
  'password',
  '*.password',
  'api_key',
  '*.api_key',
  'api_keys',
  '*.api_keys',
  'secret_key',
  '*.secret_key',
  'envs',
  '*.envs',
];

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      name: 'hangar',
      level,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    },
    destination,
  );
}

/** The restart settings (config.lifecycle). */
export interface RestartSettings {
  restartFirstDelayMs: number;
  restartMaxDelayMs: number;
  restartLimit: number;
  restartWindowMs: number;
}

/**
 * Capped exponential backoff with a limit per window: the n-th restart within the
 * window waits first * 2^(n-1), at most the cap; past the limit there is none. A
 * replica that stays up longer than the window starts again from the first delay.
 */
export class RestartPolicy {
  private readonly attempts: number[] = [];

  constructor(private readonly settings: RestartSettings) {}

  /** The delay before the next restart, or null when the limit is reached. Records the attempt. */
  next(now = Date.now()): number | null {
    const { restartFirstDelayMs, restartMaxDelayMs, restartLimit, restartWindowMs } = this.settings;
    while (this.attempts.length > 0 && now - this.attempts[0]! > restartWindowMs) this.attempts.shift();
    if (this.attempts.length >= restartLimit) return null;
    const delay = Math.min(restartFirstDelayMs * 2 ** this.attempts.length, restartMaxDelayMs);
    this.attempts.push(now);
    return delay;
  }

  get recentAttempts(): number {
    return this.attempts.length;
  }
}

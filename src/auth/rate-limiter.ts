import type { KeyLimits } from './identity-store.js';
import { SlidingWindow, WINDOW_MS } from './sliding-window.js';

export type LimitName = 'requests' | 'tokens' | 'parallel';

/** What a refused request is told (docs/auth.md, "Limits"). */
export interface Refusal {
  limit: LimitName;
  /** For the error message: the limit and when to retry. */
  reason: string;
  retryAfterMs: number;
  headers: Record<string, string>;
}

/** An admitted request: its slot, and its share of the token budget as it is spent. */
export interface Ticket {
  headers: Record<string, string>;
  /**
   * Adds tokens to the key's minute. False once the key is over its tokens per minute
   * (a stream stops there); the tokens are counted either way.
   */
  charge(tokens: number): boolean;
  /** Gives back the parallel slot; safe to call more than once. */
  release(): void;
}

interface KeyState {
  requests: SlidingWindow;
  tokens: SlidingWindow;
  inFlight: number;
}

/**
 * Per-key requests per minute, tokens per minute and requests in flight, in the
 * control plane, so they hold across every replica of every model. The clock is
 * injectable so tests count instead of waiting a minute.
 */
export class RateLimiter {
  private readonly state = new Map<number, KeyState>();

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * Admits a request of key `keyId` or says why not. `wantTokens` is the most it may
   * generate (its `max_tokens`), when it says: a request that would take the key over
   * its tokens per minute is refused up front rather than cut off.
   */
  admit(keyId: number, limits: KeyLimits, wantTokens: number | null): Ticket | Refusal {
    const now = this.now();
    const state = this.stateOf(keyId);
    if (limits.max_parallel !== null && state.inFlight >= limits.max_parallel) {
      return refusal('parallel', `at most ${limits.max_parallel} requests at once`, 1000, this.headers(state, limits, now));
    }
    if (limits.rpm !== null && state.requests.total(now) >= limits.rpm) {
      const wait = state.requests.msUntilAtMost(limits.rpm - 1, now);
      return refusal('requests', `${limits.rpm} requests per minute`, wait, this.headers(state, limits, now));
    }
    if (limits.tpm !== null) {
      const used = state.tokens.total(now);
      const want = Math.max(1, wantTokens ?? 1);
      if (want > limits.tpm) {
        // Never admitted, however long the client waits: no Retry-After, and the OpenAI and
        // Anthropic SDKs' own header that says not to retry (they waited two minutes on it).
        const headers = { ...this.headers(state, limits, now), 'x-should-retry': 'false' };
        return { limit: 'tokens', reason: `${limits.tpm} tokens per minute, and max_tokens ${want} alone is more than that: lower max_tokens`, retryAfterMs: 0, headers };
      }
      if (used + want > limits.tpm) {
        const wait = state.tokens.msUntilAtMost(limits.tpm - want, now);
        return refusal('tokens', `${limits.tpm} tokens per minute (${Math.max(0, limits.tpm - used)} left)`, wait, this.headers(state, limits, now));
      }
    }
    state.requests.add(1, now);
    state.inFlight++;
    return new AdmittedTicket(this.now, state, limits.tpm, this.headers(state, limits, now));
  }

  /** Keys no longer in use lose their windows (a revoked key, or a limit removed). */
  forget(keyId: number): void {
    this.state.delete(keyId);
  }

  private stateOf(keyId: number): KeyState {
    let state = this.state.get(keyId);
    if (!state) this.state.set(keyId, (state = { requests: new SlidingWindow(), tokens: new SlidingWindow(), inFlight: 0 }));
    return state;
  }

  /** OpenAI's x-ratelimit-* headers for the limits the key has. */
  private headers(state: KeyState, limits: KeyLimits, now: number): Record<string, string> {
    const out: Record<string, string> = {};
    if (limits.rpm !== null) {
      const used = state.requests.total(now);
      out['x-ratelimit-limit-requests'] = String(limits.rpm);
      out['x-ratelimit-remaining-requests'] = String(Math.max(0, limits.rpm - used));
      out['x-ratelimit-reset-requests'] = duration(state.requests.msUntilEmpty(now));
    }
    if (limits.tpm !== null) {
      const used = state.tokens.total(now);
      out['x-ratelimit-limit-tokens'] = String(limits.tpm);
      out['x-ratelimit-remaining-tokens'] = String(Math.max(0, limits.tpm - used));
      out['x-ratelimit-reset-tokens'] = duration(state.tokens.msUntilEmpty(now));
    }
    return out;
  }
}

/** A slot taken from a key's state: tokens charged to its window, given back once. */
class AdmittedTicket implements Ticket {
  private released = false;

  constructor(
    private readonly now: () => number,
    private readonly state: KeyState,
    private readonly tpm: number | null,
    readonly headers: Record<string, string>,
  ) {}

  charge(tokens: number): boolean {
    const at = this.now();
    if (tokens > 0) this.state.tokens.add(tokens, at);
    return this.tpm === null || this.state.tokens.total(at) <= this.tpm;
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    this.state.inFlight--;
  }
}

export function isRefusal(outcome: Ticket | Refusal): outcome is Refusal {
  return 'limit' in outcome;
}

function refusal(limit: LimitName, reason: string, retryAfterMs: number, headers: Record<string, string>): Refusal {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return { limit, reason: `${reason}; retry in ${seconds}s`, retryAfterMs, headers: { ...headers, 'retry-after': String(seconds) } };
}

/** OpenAI spells resets as `1s`, `6m0s`, `20ms`. */
export function duration(ms: number): string {
  if (ms <= 0) return '0s';
  if (ms < 1000) return `${Math.ceil(ms)}ms`;
  const seconds = Math.ceil(ms / 1000);
  return seconds < 60 ? `${seconds}s` : `${Math.floor(seconds / 60)}m${seconds % 60}s`;
}

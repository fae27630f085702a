import { describe, expect, it } from 'vitest';
import { duration, isRefusal, RateLimiter, type Refusal, type Ticket } from '../../src/auth/rate-limiter.js';
import { SlidingWindow } from '../../src/auth/sliding-window.js';

const none = { rpm: null, tpm: null, max_parallel: null };

/** A limiter on a clock the test moves. */
function limiterAt(start = 1_000_000) {
  let now = start;
  const limiter = new RateLimiter(() => now);
  return { limiter, advance: (ms: number) => (now += ms) };
}

const admitted = (outcome: Ticket | Refusal): Ticket => {
  if (isRefusal(outcome)) throw new Error(`refused: ${outcome.reason}`);
  return outcome;
};
const refused = (outcome: Ticket | Refusal): Refusal => {
  if (!isRefusal(outcome)) throw new Error('admitted');
  return outcome;
};

describe('SlidingWindow', () => {
  it('sums the last 60 seconds and forgets what is older', () => {
    const w = new SlidingWindow();
    w.add(2, 0);
    w.add(3, 30_000);
    expect(w.total(59_999)).toBe(5);
    expect(w.total(60_000)).toBe(3);
    expect(w.total(90_000)).toBe(0);
  });

  it('says how long until the total falls to a target', () => {
    const w = new SlidingWindow();
    w.add(2, 0);
    w.add(3, 30_000);
    expect(w.msUntilAtMost(5, 45_000)).toBe(0);
    expect(w.msUntilAtMost(3, 45_000)).toBe(15_000);
    expect(w.msUntilAtMost(0, 45_000)).toBe(45_000);
  });

  it('reuses a slot a minute later without carrying the old amount', () => {
    const w = new SlidingWindow();
    w.add(7, 1_000);
    w.add(1, 61_000);
    expect(w.total(61_000)).toBe(1);
  });
});

describe('RateLimiter', () => {
  it('admits rpm requests a minute, then refuses with Retry-After and OpenAI headers', () => {
    const { limiter, advance } = limiterAt();
    const limits = { ...none, rpm: 3 };
    const remaining = [0, 1, 2].map(() => admitted(limiter.admit(1, limits, null)).headers['x-ratelimit-remaining-requests']);
    expect(remaining).toEqual(['2', '1', '0']);
    advance(20_000);
    const no = refused(limiter.admit(1, limits, null));
    expect(no.limit).toBe('requests');
    expect(no.headers['retry-after']).toBe('40');
    expect(no.headers['x-ratelimit-limit-requests']).toBe('3');
    expect(no.headers['x-ratelimit-remaining-requests']).toBe('0');
    expect(no.headers['x-ratelimit-reset-requests']).toBe('40s');
    advance(40_000);
    expect(isRefusal(limiter.admit(1, limits, null))).toBe(false);
  });

  it('keeps keys apart', () => {
    const { limiter } = limiterAt();
    admitted(limiter.admit(1, { ...none, rpm: 1 }, null));
    refused(limiter.admit(1, { ...none, rpm: 1 }, null));
    admitted(limiter.admit(2, { ...none, rpm: 1 }, null));
  });

  it('refuses up front what max_tokens would take over tpm, and reports a stream running over', () => {
    const { limiter, advance } = limiterAt();
    const limits = { ...none, tpm: 100 };
    const never = refused(limiter.admit(1, limits, 150));
    expect(never.reason).toContain('alone is more');
    // Never admitted: the SDKs are told not to retry, and no wait is offered.
    expect(never.headers['x-should-retry']).toBe('false');
    expect(never.headers['retry-after']).toBeUndefined();
    const ticket = admitted(limiter.admit(1, limits, 50));
    expect(ticket.charge(90)).toBe(true);
    const no = refused(limiter.admit(1, limits, 20));
    expect(no.limit).toBe('tokens');
    expect(no.headers['x-ratelimit-remaining-tokens']).toBe('10');
    const small = admitted(limiter.admit(1, limits, null));
    expect(small.charge(10)).toBe(true);
    expect(small.charge(1)).toBe(false);
    advance(60_000);
    expect(admitted(limiter.admit(1, limits, 100)).headers['x-ratelimit-remaining-tokens']).toBe('100');
  });

  it('holds max_parallel requests in flight; release gives a slot back once', () => {
    const { limiter } = limiterAt();
    const limits = { ...none, max_parallel: 2 };
    const a = admitted(limiter.admit(1, limits, null));
    admitted(limiter.admit(1, limits, null));
    expect(refused(limiter.admit(1, limits, null)).limit).toBe('parallel');
    a.release();
    a.release();
    admitted(limiter.admit(1, limits, null));
    expect(refused(limiter.admit(1, limits, null)).limit).toBe('parallel');
  });

  it('adds no headers for a key without limits', () => {
    const { limiter } = limiterAt();
    expect(admitted(limiter.admit(1, none, 10)).headers).toEqual({});
  });

  it('spells durations as OpenAI does', () => {
    expect([0, 20, 999, 1000, 1001, 59_000, 60_000, 361_000].map(duration)).toEqual(['0s', '20ms', '999ms', '1s', '2s', '59s', '1m0s', '6m1s']);
  });
});

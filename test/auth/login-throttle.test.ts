import { describe, expect, it } from 'vitest';
import { LoginThrottle, USER_POLICY } from '../../src/auth/login-throttle.js';

describe('LoginThrottle', () => {
  it('lets a few failures go free, then doubles the wait, then locks the name out for a while', () => {
    const throttle = new LoginThrottle();
    let now = 1_000_000;
    const waits: number[] = [];
    for (let i = 1; i <= USER_POLICY.lockAfter; i++) {
      expect(throttle.check('alice', `10.0.0.${i}`, now)).toBeNull();
      const { locked } = throttle.failed('alice', `10.0.0.${i}`, now);
      expect(locked).toBe(i === USER_POLICY.lockAfter);
      const refusal = throttle.check('alice', '10.0.1.1', now);
      waits.push(refusal?.retryAfterS ?? 0);
      // Wait out whatever it asks, then try again.
      now += (refusal?.retryAfterS ?? 0) * 1000;
    }
    expect(waits.slice(0, USER_POLICY.free)).toEqual([0, 0, 0]);
    expect(waits.slice(USER_POLICY.free, USER_POLICY.lockAfter - 1)).toEqual([1, 1, 2, 4, 8, 8]);
    expect(waits[USER_POLICY.lockAfter - 1]).toBe(60);
    const lockedAt = now - 60_000;
    expect(throttle.check('alice', '10.0.2.2', lockedAt + 59_000)).toEqual({ retryAfterS: 1, locked: true });
    // After the lockout: an attempt goes ahead, and a success clears the count.
    expect(throttle.check('alice', '10.0.2.2', now)).toBeNull();
    throttle.succeeded('alice', '10.0.2.2');
    expect(throttle.failed('alice', '10.0.2.2', now).failures).toBe(1);
    // Another name is not held back by alice's failures (its address is new too).
    expect(throttle.check('bob', '10.0.3.3', now)).toBeNull();
  });

  it('counts an address across usernames', () => {
    const throttle = new LoginThrottle();
    const now = 5_000_000;
    for (let i = 0; i < 10; i++) throttle.failed(`user${i}`, '192.0.2.7', now);
    expect(throttle.check('someone-new', '192.0.2.7', now)).toBeNull();
    throttle.failed('user10', '192.0.2.7', now);
    expect(throttle.check('someone-new', '192.0.2.7', now)).toEqual({ retryAfterS: 1, locked: false });
    expect(throttle.check('someone-new', '192.0.2.8', now)).toBeNull();
  });

  it('forgets made-up names beyond its bound instead of growing', () => {
    const throttle = new LoginThrottle();
    for (let i = 0; i < 12_000; i++) throttle.failed(`made-up-${i}`, `addr-${i}`, 1);
    // The oldest were dropped: a fresh count for them.
    expect(throttle.failed('made-up-0', 'addr-x', 1).failures).toBe(1);
    expect(throttle.failed('made-up-11999', 'addr-y', 1).failures).toBe(2);
  });
});

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
    throttle.succeeded('alice');
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

  it('holds a burst sent at once to the failures left before the lockout, counting attempts still being checked', () => {
    const throttle = new LoginThrottle();
    const now = 7_000_000;
    const answered: Array<() => void> = [];
    for (let i = 0; i < USER_POLICY.lockAfter; i++) {
      expect(throttle.check('carol', `198.51.100.${i}`, now), `attempt ${i}`).toBeNull();
      answered.push(throttle.begin('carol', `198.51.100.${i}`));
    }
    // Forty sent at once were all hashed: the eleventh waits for an answer.
    expect(throttle.check('carol', '198.51.100.99', now)).toEqual({ retryAfterS: 1, locked: false });
    answered[0]!();
    answered[0]!(); // said twice, counted once
    expect(throttle.check('carol', '198.51.100.99', now)).toBeNull();
    // The ones in flight fail: the name is locked out.
    for (const done of answered.slice(1)) done();
    for (let i = 0; i < USER_POLICY.lockAfter; i++) throttle.failed('carol', `198.51.100.${i}`, now);
    expect(throttle.check('carol', '198.51.100.99', now)).toEqual({ retryAfterS: 60, locked: true });
    // A right password in flight answers like any other: nothing is left counted once it is.
    const right = throttle.begin('dave', '203.0.113.1');
    right();
    throttle.succeeded('dave');
    expect(throttle.check('dave', '203.0.113.1', now)).toBeNull();
  });

  it("does not clear an address's count when someone from it logs in: one account would reset it between guesses", () => {
    const throttle = new LoginThrottle();
    const now = 9_000_000;
    for (let round = 0; round < 4; round++) {
      for (let i = 0; i < 9; i++) throttle.failed(`victim${round}-${i}`, '192.0.2.50', now);
      throttle.succeeded('mallory');
    }
    expect(throttle.check('victim', '192.0.2.50', now)).toMatchObject({ locked: true });
  });

  it('forgets made-up names beyond its bound instead of growing', () => {
    const throttle = new LoginThrottle();
    for (let i = 0; i < 12_000; i++) throttle.failed(`made-up-${i}`, `addr-${i}`, 1);
    // The oldest were dropped: a fresh count for them.
    expect(throttle.failed('made-up-0', 'addr-x', 1).failures).toBe(1);
    expect(throttle.failed('made-up-11999', 'addr-y', 1).failures).toBe(2);
  });
});

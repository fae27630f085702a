/**
 * Failed logins, counted per username and per client address, so that guessing
 * passwords at `POST /token` costs time: a few failures are free, then each one
 * makes the next attempt wait longer (doubling), and past a bound the name or address
 * is locked out for a while. A waiting or locked one is answered 429 with
 * `Retry-After`, before any password is hashed. Attempts still being checked count
 * too: a burst sent at once was all hashed before the first failure was counted, so
 * no more may be in flight than the failures left before the lockout. A success clears
 * the name's count, not the address's (any account's holder could otherwise reset it
 * between guesses at other names); counts are forgotten after a quiet while.
 */
export interface ThrottlePolicy {
  /** Failures with no wait after them. */
  free: number;
  /** The wait after the first failure past the free ones; doubled after each further one. */
  firstDelayMs: number;
  maxDelayMs: number;
  /** At this many failures: locked out for `lockoutMs`, whatever is tried. */
  lockAfter: number;
  lockoutMs: number;
}

export const USER_POLICY: ThrottlePolicy = { free: 3, firstDelayMs: 500, maxDelayMs: 8000, lockAfter: 10, lockoutMs: 60_000 };
/** An address may be many users behind one NAT: more room before it waits. */
export const ADDRESS_POLICY: ThrottlePolicy = { free: 10, firstDelayMs: 250, maxDelayMs: 4000, lockAfter: 30, lockoutMs: 60_000 };

/** Counts with no failure for this long are forgotten. */
const FORGET_AFTER_MS = 15 * 60_000;
/** Bounded, so that failures for a million made-up names cannot grow memory without end. */
const MAX_ENTRIES = 10_000;

interface Entry {
  failures: number;
  lastFailure: number;
  /** No attempt before this time (a wait or a lockout). */
  blockedUntil: number;
}

export interface Refusal {
  retryAfterS: number;
  locked: boolean;
}

class FailureCounts {
  private readonly entries = new Map<string, Entry>();
  /** Attempts whose password is being checked now, by key (absent: none). */
  private readonly inFlight = new Map<string, number>();

  constructor(private readonly policy: ThrottlePolicy) {}

  /** Milliseconds until `key` may try again (0: now). */
  waitFor(key: string, now: number): { waitMs: number; locked: boolean } {
    const entry = this.live(key, now);
    if (entry && entry.blockedUntil > now) return { waitMs: entry.blockedUntil - now, locked: entry.failures >= this.policy.lockAfter };
    // As many in flight as failures are left before the lockout; the next once one is answered.
    const failures = entry && entry.failures < this.policy.lockAfter ? entry.failures : 0;
    if (failures + (this.inFlight.get(key) ?? 0) >= this.policy.lockAfter) return { waitMs: 1000, locked: false };
    return { waitMs: 0, locked: false };
  }

  /** An attempt of `key` is being checked; the function given back says it is answered. */
  begin(key: string): () => void {
    this.inFlight.set(key, (this.inFlight.get(key) ?? 0) + 1);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      const left = (this.inFlight.get(key) ?? 1) - 1;
      if (left > 0) this.inFlight.set(key, left);
      else this.inFlight.delete(key);
    };
  }

  /** Counts a failure; answers whether it locked `key` out. */
  fail(key: string, now: number): { failures: number; locked: boolean } {
    const entry = this.live(key, now) ?? { failures: 0, lastFailure: now, blockedUntil: 0 };
    // A lockout that has ended starts a fresh count: the next failures are free again
    // (one that has not, a failure of an attempt admitted before it, extends it).
    if (entry.failures >= this.policy.lockAfter && entry.blockedUntil <= now) entry.failures = 0;
    entry.failures++;
    entry.lastFailure = now;
    const { free, firstDelayMs, maxDelayMs, lockAfter, lockoutMs } = this.policy;
    const locked = entry.failures >= lockAfter;
    if (locked) entry.blockedUntil = now + lockoutMs;
    else if (entry.failures > free) entry.blockedUntil = now + Math.min(maxDelayMs, firstDelayMs * 2 ** (entry.failures - free - 1));
    this.entries.delete(key);
    this.entries.set(key, entry);
    if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    return { failures: entry.failures, locked };
  }

  clear(key: string): void {
    this.entries.delete(key);
  }

  private live(key: string, now: number): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry && now - entry.lastFailure > FORGET_AFTER_MS && entry.blockedUntil <= now) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }
}

export class LoginThrottle {
  private readonly users: FailureCounts;
  private readonly addresses: FailureCounts;

  constructor(userPolicy: ThrottlePolicy = USER_POLICY, addressPolicy: ThrottlePolicy = ADDRESS_POLICY) {
    this.users = new FailureCounts(userPolicy);
    this.addresses = new FailureCounts(addressPolicy);
  }

  /** Null when this attempt may go ahead; else how long to wait, and whether it is a lockout. */
  check(username: string, address: string, now: number): Refusal | null {
    const user = this.users.waitFor(username, now);
    const addr = this.addresses.waitFor(address, now);
    const waitMs = Math.max(user.waitMs, addr.waitMs);
    if (waitMs === 0) return null;
    return { retryAfterS: Math.max(1, Math.ceil(waitMs / 1000)), locked: user.locked || addr.locked };
  }

  /** The attempt is being checked now (it counts against the burst bound); call what is given back once it is answered. */
  begin(username: string, address: string): () => void {
    const user = this.users.begin(username);
    const addr = this.addresses.begin(address);
    return () => {
      user();
      addr();
    };
  }

  failed(username: string, address: string, now: number): { failures: number; locked: boolean } {
    const user = this.users.fail(username, now);
    const addr = this.addresses.fail(address, now);
    return { failures: user.failures, locked: user.locked || addr.locked };
  }

  /** The name's count is cleared; the address's stays (see above), forgotten after a quiet while. */
  succeeded(username: string): void {
    this.users.clear(username);
  }
}

import { describe, expect, it } from 'vitest';
import { InflightRequests } from '../../src/api/request-tracking.js';

describe('ids blocked by an abort (block_duration)', () => {
  it('blocks the owner\'s id for the seconds asked, and only theirs', () => {
    let now = 1_000_000;
    const inflight = new InflightRequests(() => now);
    expect(inflight.abort('alice', 'm', 'job', 30)).toBe('NOT_FOUND');
    expect(inflight.blockedId('alice', ['other', 'job'])).toEqual({ id: 'job', seconds: 30 });
    expect(inflight.blockedId('bob', ['job'])).toBeNull();
    now += 29_500;
    expect(inflight.blockedId('alice', ['job'])).toEqual({ id: 'job', seconds: 1 });
    now += 500;
    expect(inflight.blockedId('alice', ['job'])).toBeNull();
    expect(inflight.abort('alice', 'm', 'unblocked', 0)).toBe('NOT_FOUND');
    expect(inflight.blockedId('alice', ['unblocked'])).toBeNull();
  });

  it("keeps one user's blocks when another aborts made-up ids past the cap", () => {
    const inflight = new InflightRequests(() => 0);
    inflight.abort('alice', 'm', 'job', 30);
    // Before, the map evicted its oldest entry: bob could push alice's block out.
    for (let i = 0; i < 12_000; i++) inflight.abort('bob', 'm', `x${i}`, 30);
    expect(inflight.blockedId('alice', ['job'])).toEqual({ id: 'job', seconds: 30 });
    expect(inflight.blockedId('bob', ['x11999'])).not.toBeNull();
  });
});

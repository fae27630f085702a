import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RuntimeLiveness } from '../../src/runtime/runtime-liveness.js';

// The heartbeat and the disconnect probe, on a fake clock: the integration tests
// (recovery, runtime-transport) check the same against real runtimes and strays.
describe('runtime liveness', () => {
  const timings = { heartbeatIntervalMs: 1000, heartbeatTimeoutMs: 3000, connectionTimeoutMs: 800 };
  let events: string[];
  let liveness: RuntimeLiveness;

  beforeEach(() => {
    vi.useFakeTimers();
    events = [];
    liveness = new RuntimeLiveness(timings, {
      ping: () => events.push('ping'),
      dead: (reason) => events.push(`dead: ${reason}`),
      lost: () => events.push('lost'),
      stranger: () => events.push('stranger'),
    });
  });

  afterEach(() => {
    liveness.stop();
    vi.useRealTimers();
  });

  it('pings every interval and declares the runtime dead after the timeout without a PONG', () => {
    liveness.start();
    expect(events).toEqual(['ping']);
    vi.advanceTimersByTime(2500);
    liveness.pong();
    vi.advanceTimersByTime(3000);
    expect(events.filter((e) => e === 'ping')).toHaveLength(6);
    expect(events.some((e) => e.startsWith('dead'))).toBe(false);
    vi.advanceTimersByTime(1000);
    expect(events.at(-1)).toBe('dead: no heartbeat from the runtime for 3000 ms');
  });

  it('tells a stranger leaving from the runtime leaving', () => {
    liveness.probe(() => true);
    liveness.probe(() => true); // one probe at a time
    expect(events).toEqual(['ping']);
    vi.advanceTimersByTime(100);
    liveness.pong();
    vi.advanceTimersByTime(800);
    expect(events).toEqual(['ping', 'stranger']);
    liveness.probe(() => true);
    vi.advanceTimersByTime(800);
    expect(events).toEqual(['ping', 'stranger', 'ping', 'lost']);
    // Closed meanwhile: nothing is said.
    liveness.probe(() => false);
    vi.advanceTimersByTime(800);
    expect(events).toEqual(['ping', 'stranger', 'ping', 'lost', 'ping']);
  });

  it('stops pinging and probing when stopped', () => {
    liveness.start();
    liveness.probe(() => true);
    liveness.stop();
    vi.advanceTimersByTime(10_000);
    expect(events).toEqual(['ping', 'ping']);
  });
});

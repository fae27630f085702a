import net from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RelayPace } from '../../src/llama-runtime/relay-pace.js';

// The pace's own bookkeeping, on a clock the test moves: which held streams may be read
// when. The sockets are real and never connected; only their paused state is looked at.
describe('the relay pace', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('holds its streams from a step until the interval is over, however many steps come meanwhile', () => {
    const pace = new RelayPace(30);
    const socket = new net.Socket();
    pace.add(socket);
    pace.stepSent();
    expect(socket.isPaused()).toBe(true);
    expect(pace.wait()).toBe(30);
    vi.advanceTimersByTime(20);
    pace.stepSent(); // another call's first token: it does not push the interval's end back
    vi.advanceTimersByTime(10);
    expect(socket.isPaused()).toBe(false);
    pace.remove(socket);
    socket.destroy();
  });

  it('lets a stream the interval released be read once before any step holds it again', () => {
    const pace = new RelayPace(30);
    const socket = new net.Socket();
    pace.add(socket);
    pace.stepSent();
    vi.advanceTimersByTime(30);
    expect(socket.isPaused()).toBe(false);
    // A step in the same turn as the release (the outbox's timer, due with the pace's):
    // the released stream keeps its read, and the next interval starts.
    pace.stepSent();
    expect(socket.isPaused()).toBe(false);
    // Its read comes: it is held until that interval is over, not a whole new one.
    vi.advanceTimersByTime(10);
    pace.read(socket);
    expect(socket.isPaused()).toBe(true);
    vi.advanceTimersByTime(20);
    expect(socket.isPaused()).toBe(false);
    pace.remove(socket);
    socket.destroy();
  });

  it('does not hold a read when no interval is running, nor a stream the server paces', () => {
    const pace = new RelayPace(30);
    const socket = new net.Socket();
    pace.add(socket);
    pace.stepSent();
    vi.advanceTimersByTime(30);
    pace.read(socket); // a read after the interval with no step since: nothing to wait for
    expect(socket.isPaused()).toBe(false);
    expect(pace.wait()).toBe(0);
    pace.pacedByServer();
    pace.stepSent();
    expect(pace.wait()).toBeLessThanOrEqual(2); // only the rest of the tick's writes
    pace.remove(socket);
    socket.destroy();
  });
});

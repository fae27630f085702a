import { describe, expect, it } from 'vitest';
import { EventLog } from '../../src/supervisor/event-log.js';

describe('EventLog', () => {
  it("keeps the lifecycle when a caller floods it with failed calls (a client's 400s)", () => {
    const log = new EventLog();
    log.add('INFO', 'Launch model');
    log.add('ERROR', 'Replica m-0 died: SIGKILL');
    for (let i = 0; i < 500; i++) log.addCallFailure(`/v1/chat/completions: too long ${i}`);
    log.add('INFO', 'Replica m-0 restarted');
    const events = log.list();
    // Before, the 100 newest were all failed calls: the launch and the crash were gone.
    expect(events.map((e) => e.event_content).filter((c) => !c.startsWith('/v1/'))).toEqual(['Launch model', 'Replica m-0 died: SIGKILL', 'Replica m-0 restarted']);
    const calls = events.filter((e) => e.event_content.startsWith('/v1/'));
    expect(calls).toHaveLength(50);
    expect(calls.at(-1)!.event_content).toContain('too long 499');
    // Oldest first, in the order they happened.
    expect(events.at(-1)!.event_content).toBe('Replica m-0 restarted');
    expect(events[0]!.event_content).toBe('Launch model');
  });

  it('keeps at most its cap of lifecycle events, newest', () => {
    const log = new EventLog(3);
    for (let i = 0; i < 5; i++) log.add('INFO', `e${i}`);
    log.addCallFailure('/v1/x: failed');
    expect(log.list().map((e) => e.event_content)).toEqual(['e2', 'e3', 'e4', '/v1/x: failed']);
  });
});

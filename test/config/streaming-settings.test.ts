import { describe, expect, it } from 'vitest';
import { streamingFromEnv } from '../../src/config/config.js';
import { relayPaceMs } from '../../src/config/relay-pace-setting.js';

describe('streaming settings', () => {
  it('takes the flag over HANGAR_STREAM_INTERVAL, and 1 when neither is set', () => {
    expect(streamingFromEnv({})).toEqual({ interval: 1, perToken: false, relayPaceMs: 10, stallMs: 60_000 });
    expect(streamingFromEnv({ HANGAR_STREAM_INTERVAL: '4' })).toEqual({ interval: 4, perToken: false, relayPaceMs: 10, stallMs: 60_000 });
    expect(streamingFromEnv({ HANGAR_STREAM_STALL_TIMEOUT_MS: '500' }).stallMs).toBe(500);
    for (const bad of ['0', '99', 'soon', '1e3']) expect(() => streamingFromEnv({ HANGAR_STREAM_STALL_TIMEOUT_MS: bad })).toThrow('HANGAR_STREAM_STALL_TIMEOUT_MS');
    expect(streamingFromEnv({ HANGAR_STREAM_INTERVAL: '4' }, 8).interval).toBe(8);
  });

  it('refuses an interval that is not an integer from 1 to 1024, naming the value', () => {
    for (const bad of ['0', '1025', '1.5', 'x', '-2']) {
      expect(() => streamingFromEnv({ HANGAR_STREAM_INTERVAL: bad })).toThrow(`got "${bad}"`);
    }
  });

  it('reads HANGAR_TOKEN_RELAY as batched or per-token and refuses anything else', () => {
    expect(streamingFromEnv({ HANGAR_TOKEN_RELAY: 'per-token' }).perToken).toBe(true);
    expect(streamingFromEnv({ HANGAR_TOKEN_RELAY: 'batched' }).perToken).toBe(false);
    expect(streamingFromEnv({ HANGAR_TOKEN_RELAY: '' }).perToken).toBe(false);
    expect(() => streamingFromEnv({ HANGAR_TOKEN_RELAY: 'per_token' })).toThrow('HANGAR_TOKEN_RELAY must be "batched" (the default) or "per-token" (the benchmark\'s baseline), got "per_token"');
  });
});

describe('the relay pace setting (HANGAR_RELAY_PACE_MS)', () => {
  it('is 10 ms unset, any integer from 0 to 100 when set, and 0 for the per-token baseline', () => {
    expect(relayPaceMs({})).toBe(10);
    expect(relayPaceMs({ HANGAR_RELAY_PACE_MS: ' ' })).toBe(10);
    expect(relayPaceMs({ HANGAR_RELAY_PACE_MS: '0' })).toBe(0);
    expect(relayPaceMs({ HANGAR_RELAY_PACE_MS: '25' })).toBe(25);
    expect(relayPaceMs({ HANGAR_RELAY_PACE_MS: '100' })).toBe(100);
    expect(relayPaceMs({ HANGAR_TOKEN_RELAY: 'per-token', HANGAR_RELAY_PACE_MS: '40' })).toBe(0);
  });

  it('stops the service at start for anything else, naming the variable and the value', () => {
    for (const bad of ['-1', '101', '2.5', '1e1', 'ten', '0x10']) {
      expect(() => streamingFromEnv({ HANGAR_RELAY_PACE_MS: bad })).toThrow(`HANGAR_RELAY_PACE_MS must be an integer from 0 to 100 (milliseconds), got "${bad}"`);
    }
  });
});

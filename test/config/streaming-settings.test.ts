import { describe, expect, it } from 'vitest';
import { streamingFromEnv } from '../../src/config/config.js';

describe('streaming settings', () => {
  it('takes the flag over HANGAR_STREAM_INTERVAL, and 1 when neither is set', () => {
    expect(streamingFromEnv({})).toEqual({ interval: 1, perToken: false });
    expect(streamingFromEnv({ HANGAR_STREAM_INTERVAL: '4' })).toEqual({ interval: 4, perToken: false });
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

import { describe, expect, it } from 'vitest';
import { launchQuery } from '../../src/api/models/schema.js';

describe('POST /v1/models?wait_ready=', () => {
  it('reads a boolean as FastAPI does, in any case: Xinference\'s client sends Python\'s False', () => {
    const read = (v?: string) => launchQuery.parse(v === undefined ? {} : { wait_ready: v }).wait_ready;
    expect(['False', 'false', 'FALSE', '0', 'no', 'off', 'f', 'n'].map(read)).toEqual(Array(8).fill(false));
    expect(['True', 'true', '1', 'yes', 'on', 't', 'y'].map(read)).toEqual(Array(7).fill(true));
    expect(read()).toBe(true);
    expect(launchQuery.safeParse({ wait_ready: 'maybe' }).success).toBe(false);
    expect(launchQuery.safeParse({ wait_ready: '' }).success).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import { bodyBudgetBytes, DEFAULT_BODY_BUDGET_BYTES } from '../../src/config/body-budget-setting.js';

describe('HANGAR_MAX_INFLIGHT_BODY_BYTES', () => {
  it('defaults to 256 MiB, takes 0 (no budget) or a byte count from 1 MiB, and names itself when it is wrong', () => {
    expect(bodyBudgetBytes({})).toBe(DEFAULT_BODY_BUDGET_BYTES);
    expect(bodyBudgetBytes({ HANGAR_MAX_INFLIGHT_BODY_BYTES: ' ' })).toBe(256 * 1024 * 1024);
    expect(bodyBudgetBytes({ HANGAR_MAX_INFLIGHT_BODY_BYTES: '0' })).toBe(0);
    expect(bodyBudgetBytes({ HANGAR_MAX_INFLIGHT_BODY_BYTES: '1048576' })).toBe(1048576);
    for (const bad of ['1048575', '-1', '1e9', '64MiB', '0x100000', '99999999999999999999']) {
      expect(() => bodyBudgetBytes({ HANGAR_MAX_INFLIGHT_BODY_BYTES: bad }), bad).toThrow(/HANGAR_MAX_INFLIGHT_BODY_BYTES must be 0/);
    }
  });
});

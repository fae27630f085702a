import { describe, expect, it } from 'vitest';
import { assertTransition, canTransition } from '../../src/supervisor/instance-state.js';

describe('instance state changes', () => {
  it('allows the lifecycle paths', () => {
    expect(canTransition('CREATING', 'READY')).toBe(true);
    expect(canTransition('CREATING', 'ERROR')).toBe(true);
    expect(canTransition('READY', 'TERMINATING')).toBe(true);
    expect(canTransition('ERROR', 'TERMINATING')).toBe(true);
    expect(canTransition('TERMINATING', 'TERMINATED')).toBe(true);
  });

  it('refuses the rest', () => {
    expect(canTransition('TERMINATED', 'READY')).toBe(false);
    expect(canTransition('READY', 'CREATING')).toBe(false);
    expect(() => assertTransition('model m', 'TERMINATED', 'READY')).toThrow('model m: state change TERMINATED -> READY is not allowed');
  });
});

import { describe, expect, it } from 'vitest';
import { DEFAULT_WARM_SPARE_MODULES, resolveConfig } from '../../src/config/config.js';

describe('warm spare setting', () => {
  it('is on by default and turned off by the flag or HANGAR_WARM_SPARE', () => {
    expect(resolveConfig({}, {}).warmSpare).toBe(true);
    expect(resolveConfig({}, { HANGAR_WARM_SPARE: '' }).warmSpare).toBe(true);
    expect(resolveConfig({ warmSpare: false }, {}).warmSpare).toBe(false);
    for (const off of ['0', 'false', 'OFF', 'no']) expect(resolveConfig({}, { HANGAR_WARM_SPARE: off }).warmSpare).toBe(false);
    expect(resolveConfig({ warmSpare: true }, { HANGAR_WARM_SPARE: '0' }).warmSpare).toBe(false); // the flag only turns it off
    expect(resolveConfig({ warmSpare: false }, { HANGAR_WARM_SPARE: '1' }).warmSpare).toBe(false);
  });

  it('names the variable and the bad value', () => {
    expect(() => resolveConfig({}, { HANGAR_WARM_SPARE: 'maybe' })).toThrow(/HANGAR_WARM_SPARE must be 1 or 0.*"maybe"/);
  });

  it('imports the runtime\'s own list unless HANGAR_WARM_SPARE_MODULES says otherwise', () => {
    expect(resolveConfig({}, {}).warmSpareModules).toEqual(DEFAULT_WARM_SPARE_MODULES);
    expect(resolveConfig({}, { HANGAR_WARM_SPARE_MODULES: 'torch, sklearn,,' }).warmSpareModules).toEqual(['torch', 'sklearn']);
  });
});

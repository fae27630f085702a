import { describe, expect, it } from 'vitest';
import { forgetOldFailedLaunches } from '../../src/supervisor/failed-launches.js';

describe('failed launches kept', () => {
  it('keeps the newest failed launches and every other record', () => {
    const instances = new Map<string, { uid: string; launchFailedAt: number | null }>();
    // Failed in an order other than the table's (a uid launched again keeps its place).
    for (const [uid, at] of [['f3', 30], ['ready', null], ['f1', 10], ['f4', 40], ['died-after-ready', null], ['f2', 20]] as const) instances.set(uid, { uid, launchFailedAt: at });
    expect(forgetOldFailedLaunches(instances, 2)).toEqual(['f1', 'f2']);
    expect([...instances.keys()]).toEqual(['f3', 'ready', 'f4', 'died-after-ready']);
    expect(forgetOldFailedLaunches(instances, 2)).toEqual([]);
    expect(forgetOldFailedLaunches(instances, 0)).toEqual(['f3', 'f4']);
    expect([...instances.keys()]).toEqual(['ready', 'died-after-ready']);
  });
});

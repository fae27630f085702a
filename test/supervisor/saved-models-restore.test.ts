import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logging/logger.js';
import { InstanceStore } from '../../src/supervisor/instance-store.js';
import type { LaunchRequest } from '../../src/supervisor/launch-request.js';
import { SavedModels } from '../../src/supervisor/saved-models.js';
import { describeUnrestored } from '../../src/supervisor/unrestored-instances.js';

describe('restoring saved models at start', () => {
  let folder = '';
  afterEach(async () => {
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it('loads them a few at a time, and not one terminated while it waited its turn', async () => {
    folder = await mkdtemp(path.join(os.tmpdir(), 'hangar-restore-'));
    const logger = createLogger('silent');
    const store = new InstanceStore(path.join(folder, 'instances.json'), logger);
    const uids = ['a', 'b', 'c', 'd', 'e'];
    await store.save(uids.map((uid) => ({ uid, request: { model_name: 'm', model_type: 'flexible' } as LaunchRequest })));
    let running = 0;
    let most = 0;
    const launched: string[] = [];
    const finishers: Array<() => void> = [];
    const saved: SavedModels = new SavedModels({
      store,
      autostart: null,
      instance: () => undefined,
      instances: () => [],
      launch: async (request) => {
        launched.push(request.model_uid!);
        most = Math.max(most, ++running);
        await new Promise<void>((resolve) => finishers.push(resolve));
        running--;
        if (request.model_uid === 'e') throw new Error('its registration is gone');
        saved.unrestored.forget(request.model_uid!);
        return request.model_uid!;
      },
      resolve: () => {
        throw new Error('not used');
      },
      gpuCount: () => 0,
      shuttingDown: () => false,
      logger,
      restoreConcurrency: 2,
    });
    expect(await saved.restore()).toBe(5);
    await new Promise((resolve) => setImmediate(resolve));
    expect(launched).toEqual(['a', 'b']);
    // One waiting its turn reads as launching, not as failed.
    expect(describeUnrestored(saved.unrestored.get('c')!)).toMatchObject({ status: 'CREATING', error_message: null });
    // Terminated while queued: forgotten, so never launched.
    saved.unrestored.forget('d');
    while (finishers.length > 0) {
      finishers.shift()!();
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(launched).toEqual(['a', 'b', 'c', 'e']);
    expect(most).toBe(2);
    expect(describeUnrestored(saved.unrestored.get('e')!)).toMatchObject({ status: 'ERROR', error_message: expect.stringContaining('its registration is gone') });
    expect(saved.unrestored.get('c')).toBeUndefined();
  });
});

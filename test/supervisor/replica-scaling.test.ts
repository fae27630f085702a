import { describe, expect, it } from 'vitest';
import { defaultLifecycle } from '../../src/config/config.js';
import { createLogger } from '../../src/logging/logger.js';
import { LifecycleEvents } from '../../src/supervisor/lifecycle-events.js';
import type { LaunchRequest } from '../../src/supervisor/launch-request.js';
import { ModelInstance } from '../../src/supervisor/model-instance.js';
import { MAX_REPLICAS, Replica } from '../../src/supervisor/replica.js';
import { ReplicaRecovery } from '../../src/supervisor/replica-recovery.js';
import { ReplicaScaling } from '../../src/supervisor/replica-scaling.js';
import type { RuntimeLauncher } from '../../src/runtime/runtime.js';
import { expectHangarError, useTempRegistry } from '../registry/fixtures.js';

const registry = useTempRegistry();

describe('adding replicas', () => {
  it(`refuses a replica beyond ${MAX_REPLICAS}, the launch's own limit, before starting anything`, async () => {
    let starts = 0;
    const launcher: RuntimeLauncher = {
      start: async () => {
        starts++;
        throw new Error('no runtime is started past the limit');
      },
    };
    const logger = createLogger('silent');
    const recovery = new ReplicaRecovery(launcher, '/nonexistent-cache', defaultLifecycle, logger, new LifecycleEvents());
    let persisted = 0;
    const scaling = new ReplicaScaling({ launcher, cacheDir: '/nonexistent-cache', gpuCount: () => 0, recovery, timings: defaultLifecycle, logger, persist: async () => void persisted++ });
    const request: LaunchRequest = { model_name: 'simulator', model_type: 'LLM', model_engine: 'simulator', replica: MAX_REPLICAS, n_gpu: null, envs: {}, engine_kwargs: {} };
    const replicas = Array.from({ length: MAX_REPLICAS }, (_, i) => new Replica(i, `sim-${i}`, []));
    for (const r of replicas) r.transition('READY');
    const instance = new ModelInstance('sim', request, 'key', registry().resolve(request), replicas);
    instance.transition('READY');

    const err = await expectHangarError(() => scaling.add(instance), 'replica_limit', 400);
    expect(err.message).toBe(`Model sim already has ${MAX_REPLICAS} replicas, the most one model may have`);
    expect(starts).toBe(0);
    expect(persisted).toBe(0);
    expect(instance.replicas).toHaveLength(MAX_REPLICAS);
  });
});

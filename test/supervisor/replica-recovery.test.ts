import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { defaultLifecycle } from '../../src/config/config.js';
import { createLogger } from '../../src/logging/logger.js';
import { LifecycleEvents } from '../../src/supervisor/lifecycle-events.js';
import { ModelInstance } from '../../src/supervisor/model-instance.js';
import { Replica } from '../../src/supervisor/replica.js';
import { ReplicaRecovery } from '../../src/supervisor/replica-recovery.js';
import type { LaunchRequest } from '../../src/supervisor/launch-request.js';
import type { Runtime, RuntimeLauncher } from '../../src/runtime/runtime.js';
import { RuntimeFailure } from '../../src/runtime/runtime-failure.js';
import { useTempRegistry } from '../registry/fixtures.js';

const registry = useTempRegistry();

const request: LaunchRequest = { model_name: 'simulator', model_type: 'LLM', model_engine: 'simulator', replica: 1, n_gpu: null, envs: {}, engine_kwargs: {} };

/** The one part of a Runtime recovery touches: its death. */
function dyingRuntime(): { runtime: Runtime; die: (reason: string) => void } {
  let listener: (reason: string) => void = () => {};
  const runtime = { replicaUid: 'sim-0', pid: 0, onDeath: (l: (reason: string) => void) => (listener = l) } as unknown as Runtime;
  return { runtime, die: (reason) => listener(reason) };
}

describe('replica recovery', () => {
  it('leaves no listener behind on the instance for each restart it scheduled', async () => {
    const restartLimit = 15;
    let starts = 0;
    // Failure injection: every restart fails, as a runtime that crashes while loading does.
    const launcher: RuntimeLauncher = {
      start: async () => {
        starts++;
        throw new RuntimeFailure('dead', 'the runtime exited while loading');
      },
    };
    const timings = { ...defaultLifecycle, restartFirstDelayMs: 1, restartMaxDelayMs: 1, restartLimit, restartWindowMs: 60_000 };
    const recovery = new ReplicaRecovery(launcher, '/nonexistent-cache', timings, createLogger('silent'), new LifecycleEvents());
    const replica = new Replica(0, 'sim-0', []);
    const instance = new ModelInstance('sim', request, 'key', registry().resolve(request), [replica]);
    const { runtime, die } = dyingRuntime();
    replica.runtime = runtime;
    replica.transition('READY');
    instance.transition('READY');
    const warnings: Error[] = [];
    const onWarning = (w: Error): number => warnings.push(w);
    process.on('warning', onWarning);
    try {
      recovery.watch(instance, replica);
      die('killed');
      const deadline = Date.now() + 10_000;
      while (instance.state !== 'ERROR' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    } finally {
      process.off('warning', onWarning);
    }
    expect(starts).toBe(restartLimit);
    expect(instance.state).toBe('ERROR');
    expect(instance.errorMessage).toContain(`restarted ${restartLimit} times`);
    expect(getEventListeners(instance.lifetime.signal, 'abort')).toHaveLength(0);
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
  });
});

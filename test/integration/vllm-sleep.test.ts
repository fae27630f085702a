import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/logging/logger.js';
import { Registry } from '../../src/registry/index.js';
import { LocalLauncher } from '../../src/runtime/local-launcher.js';
import type { LaunchRequest } from '../../src/supervisor/launch-request.js';
import type { UnloadEvent, WakeEvent } from '../../src/supervisor/lifecycle-events.js';
import { SavedLaunches } from '../../src/supervisor/saved-launches.js';
import { Supervisor } from '../../src/supervisor/supervisor.js';
import { environment, CPU_ENV } from '../registry/fixtures.js';
import { repoRoot } from './harness/server.js';
import { tinyLlm } from './harness/tiny-models.js';

/**
 * vLLM sleep mode as a lighter eviction (docs/on-demand.md, "vLLM sleep mode"), end to
 * end through the real supervisor, admission, local launcher and Python runtime, with
 * vLLM itself replaced by python-runtime/tests/vllm_call_double: a call-compatibility
 * double of vllm 0.30.0 that PROVES WELL-FORMED CALLS ONLY. Nothing here moves weights,
 * touches a GPU or measures a wake: the machine has no GPU, so the GPU and its budget are
 * declared to the supervisor (one GPU of 10 GiB), as nvidia-smi would report them.
 */
const GIB = 2 ** 30;
const DOUBLE = path.join(repoRoot, 'python-runtime', 'tests', 'vllm_call_double');

describe('vLLM sleep mode, with the call double (proves the calls only)', () => {
  let home: string;
  let supervisor: Supervisor;
  let callsLog: string;
  const unloads: UnloadEvent[] = [];
  const wakes: WakeEvent[] = [];
  let launches = 0;
  const budgets = { hostBytes: 64 * GIB, gpuBytes: { 0: 10 * GIB } as Record<number, number> };

  beforeAll(async () => {
    home = await mkdtemp(path.join(os.tmpdir(), 'hangar-vllm-sleep-'));
    callsLog = path.join(home, 'vllm-calls.jsonl');
    const config = resolveConfig({ home, logLevel: 'silent' });
    const logger = createLogger('silent');
    // What a GPU host with vLLM installed probes as: the double answers `import vllm`.
    const env = environment([...CPU_ENV.pythonModules, 'vllm'], [...CPU_ENV.executables], 1, [...CPU_ENV.nodeModules]);
    const registry = await Registry.open({ home, env, logger });
    const launcher = new LocalLauncher({ python: config.python, runtimeRoot: config.runtimeRoot, home, timings: config.lifecycle, logger, warmSpare: false, warmSpareModules: [] });
    const onDemandList = new SavedLaunches(path.join(home, 'on-demand.json'), logger, 'on-demand list');
    supervisor = new Supervisor({
      resolver: registry,
      launcher,
      gpuCount: 1,
      cacheDir: path.join(home, 'cache'),
      timings: config.lifecycle,
      store: null,
      logger,
      memoryBudgets: () => budgets,
      onDemandList,
      onDemand: { enabled: true, waitMs: 120_000, keepAliveMs: null },
    });
    supervisor.lifecycle.listen({ unloaded: (e) => unloads.push(e), woken: (e) => wakes.push(e), launched: () => void launches++ });
    const model = tinyLlm();
    for (const uid of ['a', 'b']) {
      const request: LaunchRequest = {
        model_uid: uid,
        model_name: 'qwen2.5-instruct',
        model_type: 'LLM',
        model_engine: 'vLLM',
        model_format: 'pytorch',
        model_size_in_billions: '0_5',
        model_path: model.path,
        replica: 1,
        n_gpu: 'auto',
        envs: { PYTHONPATH: DOUBLE, HANGAR_VLLM_DOUBLE_LOG: callsLog },
        engine_kwargs: {},
      };
      await supervisor.addOnDemand(request);
    }
  }, 120_000);

  afterAll(async () => {
    await supervisor?.shutdown();
    if (home) await rm(home, { recursive: true, force: true });
  });

  const calls = (): Array<{ event: string; [k: string]: unknown }> =>
    readFileSync(callsLog, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { event: string });

  /** One request as the API makes it: a lease (which loads or wakes the model), a call, the lease given back. */
  const ask = async (uid: string): Promise<string> => {
    const lease = await supervisor.acquire(uid);
    try {
      const result = await supervisor.call({ uid, route: '/v1/completions', types: ['LLM'] }, 'generate', ['Hello'], { generate_config: { max_tokens: 3 } });
      return (result.value as { text: string }).text;
    } finally {
      lease.release();
    }
  };
  const pid = (uid: string): number => supervisor.require(uid).replicas[0]!.runtime!.pid;

  it('puts the idle model to sleep instead of unloading it when another needs its GPU, and wakes it for its next request', async () => {
    expect(await ask('a')).toBe('t0 t1 t2 ');
    const pidA = pid('a');
    expect(calls().find((c) => c.event === 'from_engine_args')).toMatchObject({ enable_sleep_mode: true });
    // vLLM takes 90% of the GPU: b fits only once a is asleep.
    expect(supervisor.memoryUse().find((d) => d.device === 'gpu:0')!.used_bytes).toBe(Math.round(0.9 * 10 * GIB));

    expect(await ask('b')).toBe('t0 t1 t2 ');
    const a = supervisor.require('a');
    expect(a.state).toBe('READY');
    expect(a.asleep).toBe(true);
    expect(a.describe()).toMatchObject({ sleeping: true });
    expect(a.charge!.gpus[0]).toBeLessThan(GIB);
    expect(a.events.list().map((e) => e.event_content).join('\n')).toMatch(/Put to sleep to make room for b \(vLLM sleep mode level 1/);
    expect(calls().filter((c) => c.event === 'sleep')).toEqual([{ event: 'sleep', level: 1, mode: 'abort' }]);
    const gpu = supervisor.memoryUse().find((d) => d.device === 'gpu:0')!;
    expect(gpu.used_bytes).toBeLessThanOrEqual(gpu.budget_bytes);

    // Five requests for the sleeping model at once: one wake, which puts b to sleep to make room.
    const answers = await Promise.all(Array.from({ length: 5 }, () => ask('a')));
    expect(answers).toEqual(Array(5).fill('t0 t1 t2 '));
    expect(pid('a')).toBe(pidA);
    expect(supervisor.require('a').asleep).toBe(false);
    expect(supervisor.require('b').asleep).toBe(true);
    expect(calls().filter((c) => c.event === 'wake_up')).toEqual([{ event: 'wake_up', tags: null }]);
    expect(calls().filter((c) => c.event === 'sleep')).toHaveLength(2);
    expect(launches).toBe(2);
    expect(unloads.map((u) => [u.modelUid, u.reason])).toEqual([
      ['a', 'sleep'],
      ['b', 'sleep'],
    ]);
    expect(wakes.map((w) => [w.modelUid, w.outcome])).toEqual([['a', 'ready']]);
    expect(supervisor.require('a').events.list().at(-1)!.event_content).toMatch(/^Woken from sleep in \d+\.\d\d s$/);
    // Never a generate while asleep: the double refuses one, which would have failed an answer above.
    expect(calls().filter((c) => c.event === 'generate')).toHaveLength(7);
  }, 180_000);

  it('unloads rather than puts to sleep where host memory cannot hold the weights too', async () => {
    // b is asleep, a awake. Asleep, a would hold its weights in host memory, where b's
    // waking gives back as much: host memory set just short of that sum leaves room for
    // b only once a is unloaded, not put to sleep.
    const use = supervisor.memoryUse().find((d) => d.device === 'cpu')!;
    const weights = supervisor.require('a').memoryEstimate!.weights;
    expect(weights).toBeGreaterThan(0);
    budgets.hostBytes = use.used_bytes - Math.floor(weights / 2);
    try {
      expect(await ask('b')).toBe('t0 t1 t2 ');
    } finally {
      budgets.hostBytes = 64 * GIB;
    }
    expect(supervisor.has('a')).toBe(false);
    expect(unloads.at(-1)).toMatchObject({ modelUid: 'a', reason: 'memory' });
    expect(supervisor.require('b').asleep).toBe(false);
    expect(calls().filter((c) => c.event === 'sleep')).toHaveLength(2);
    // Loaded again on demand, cold, with sleep mode again.
    expect(await ask('a')).toBe('t0 t1 t2 ');
    expect(launches).toBe(3);
  }, 180_000);
});

import { readFileSync } from 'node:fs';
import os from 'node:os';

const THREADS_ENV = 'HANGAR_RUNTIME_CPU_THREADS';

/**
 * How many threads llama.cpp computes with on a replica without GPUs, by the rule
 * the Python runtime applies to torch (docs/runtime-protocol.md, "CPU threads"): the
 * launch's `n_threads`, else an operator's `HANGAR_RUNTIME_CPU_THREADS` (0: the
 * library's default), else an operator's `OMP_NUM_THREADS`, else the replica's share
 * of the cores this process may use. null: the library's default.
 *
 * The share's size depends on where llama.cpp computes. In this process (node-llama-cpp,
 * `inProcess`), one core of a share of several is left to the runtime's event loop.
 * In llama-server (the default engine process), the whole share, counted in physical
 * cores as llama.cpp's own default counts them (an SMT sibling adds no memory bandwidth,
 * which decoding is bound by, and one more thread at every barrier): there the relay
 * runs in other processes and needs a few hundred microseconds of CPU per token, and on
 * the 2-vCPU VM two threads beat one for one stream and for eight, on a 25M and a 200M
 * model (docs/performance.md, "llama.cpp against llama-server").
 *
 * Why on purpose: llama.cpp's threads meet at a barrier after every operation of
 * every layer, so one of them preempted by another runnable thread (the event loop
 * that relays tokens and answers PINGs, the control plane) stalls all of them. On the
 * 2-vCPU VM node-llama-cpp's default (4 threads) ran the tiny test model at 4
 * tokens/s, two threads at 144 and one at 1,723 (docs/performance.md, "llama.cpp").
 */
export function cpuThreadsFor(
  options: { nThreads: number | null; replicas: number; gpu: boolean; inProcess: boolean },
  env: NodeJS.ProcessEnv,
  cores: number = usableCores(),
  warn: (message: string) => void = () => {},
  threadsPerCore: number = smtThreadsPerCore(),
): number | null {
  if (options.nThreads !== null) return options.nThreads;
  if (options.gpu) return null;
  const raw = env[THREADS_ENV]?.trim();
  if (raw) {
    const wanted = /^\d+$/.test(raw) ? Number(raw) : -1;
    if (wanted === 0) return null;
    if (wanted > 0) return wanted;
    warn(`${THREADS_ENV}=${JSON.stringify(raw)} is not a count of threads; using the default`);
  }
  const omp = Number(env.OMP_NUM_THREADS?.trim());
  if (Number.isInteger(omp) && omp > 0) return omp;
  const counted = options.inProcess ? cores : Math.max(1, Math.floor(cores / Math.max(1, threadsPerCore)));
  const share = Math.max(1, Math.floor(counted / Math.max(1, options.replicas)));
  return options.inProcess && share > 1 ? share - 1 : share;
}

/** Hardware threads per physical core (2 with SMT on most x86 hosts), from sysfs; 1 where it cannot tell. */
export function smtThreadsPerCore(): number {
  try {
    const siblings = readFileSync('/sys/devices/system/cpu/cpu0/topology/thread_siblings_list', 'utf8').trim();
    // "0", "0,8" or "0-1": the hardware threads of cpu0's core.
    const count = siblings.split(',').reduce((n, part) => {
      const [a, b] = part.split('-').map(Number);
      return n + (b === undefined ? 1 : b! - a! + 1);
    }, 0);
    return Number.isInteger(count) && count > 0 ? count : 1;
  } catch {
    return 1;
  }
}

/** The cores this process may run on (its affinity mask where Node can tell, else every core). */
export function usableCores(): number {
  return typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
}

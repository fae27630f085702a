import os from 'node:os';

const THREADS_ENV = 'HANGAR_RUNTIME_CPU_THREADS';

/**
 * How many threads llama.cpp computes with on a replica without GPUs, by the rule
 * the Python runtime applies to torch (docs/runtime-protocol.md, "CPU threads"): the
 * launch's `n_threads`, else an operator's `HANGAR_RUNTIME_CPU_THREADS` (0: the
 * library's default), else an operator's `OMP_NUM_THREADS`, else the replica's share
 * of the cores this process may use, less one for the runtime's own event loop when
 * the share has more than one. null: the library's default.
 *
 * Why on purpose: llama.cpp's threads meet at a barrier after every operation of
 * every layer, so one of them preempted by another runnable thread (the event loop
 * that relays tokens and answers PINGs, the control plane) stalls all of them. On the
 * 2-vCPU VM node-llama-cpp's default (4 threads) ran the tiny test model at 4
 * tokens/s, two threads at 144 and one at 1,723 (docs/performance.md, "llama.cpp").
 */
export function cpuThreadsFor(
  options: { nThreads: number | null; replicas: number; gpu: boolean },
  env: NodeJS.ProcessEnv,
  cores: number = usableCores(),
  warn: (message: string) => void = () => {},
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
  const share = Math.max(1, Math.floor(cores / Math.max(1, options.replicas)));
  return share > 1 ? share - 1 : 1;
}

/** The cores this process may run on (its affinity mask where Node can tell, else every core). */
export function usableCores(): number {
  return typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
}

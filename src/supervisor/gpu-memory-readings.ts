import { gpuDeviceReadings, gpuMemoryByPid, type GpuDeviceReading } from '../runtime/gpu-memory.js';
import type { ModelInstance } from './model-instance.js';

const READ_EVERY_MS = 5000;

/**
 * Each GPU replica's GPU memory as nvidia-smi reports its runtime's process, every few
 * seconds (`replica_memory[].gpu_memory_bytes` of GET /v1/models/{uid}), and each GPU's
 * memory and utilization (the stats routes, docs/monitoring.md). Only on hosts with
 * GPUs: elsewhere there is nothing to read.
 */
export class GpuMemoryReadings {
  private readonly timer: NodeJS.Timeout;
  /** The last reading of every GPU. */
  devices: GpuDeviceReading[] = [];

  constructor(private readonly instances: () => Iterable<ModelInstance>) {
    this.timer = setInterval(() => void this.read(), READ_EVERY_MS);
    this.timer.unref();
  }

  private async read(): Promise<void> {
    const [byPid, devices] = await Promise.all([gpuMemoryByPid().catch(() => new Map<number, number>()), gpuDeviceReadings().catch(() => [])]);
    this.devices = devices;
    for (const instance of this.instances()) {
      for (const replica of instance.replicas) {
        // A cluster node's runtime is not in this host's nvidia-smi (its pid may be another process's here).
        if (replica.gpuIndexes.length > 0 && replica.runtime && !replica.runtime.node) replica.gpuMemoryBytes = byPid.get(replica.runtime.pid) ?? null;
      }
    }
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

import { execa } from 'execa';

const MIB = 1024 * 1024;

/**
 * Each GPU's total memory by index, from nvidia-smi (`memory.total`, MiB); an empty
 * map where there is no nvidia-smi or it fails. Read once at start for the budgets.
 */
export async function gpuTotals(): Promise<Record<number, number>> {
  const result = await execa('nvidia-smi', ['--query-gpu=index,memory.total', '--format=csv,noheader,nounits'], { reject: false, timeout: 10_000 });
  if (result.failed || result.exitCode !== 0) return {};
  return parseRows(result.stdout);
}

/** GPU memory used by each process (pid to bytes), from nvidia-smi's compute-apps query; empty without one. */
export async function gpuMemoryByPid(): Promise<Map<number, number>> {
  const result = await execa('nvidia-smi', ['--query-compute-apps=pid,used_memory', '--format=csv,noheader,nounits'], { reject: false, timeout: 10_000 });
  const out = new Map<number, number>();
  if (result.failed || result.exitCode !== 0) return out;
  for (const [pid, bytes] of Object.entries(parseRows(result.stdout))) out.set(Number(pid), (out.get(Number(pid)) ?? 0) + bytes);
  return out;
}

/** One GPU as nvidia-smi reports it now. */
export interface GpuDeviceReading {
  index: number;
  name: string;
  memoryTotalBytes: number;
  memoryUsedBytes: number;
  /** Percent of the last sample period in which a kernel ran (nvidia-smi's `utilization.gpu`); null when not supported. */
  utilizationPercent: number | null;
}

/** Every GPU's memory and utilization, from nvidia-smi; empty without one. */
export async function gpuDeviceReadings(): Promise<GpuDeviceReading[]> {
  const result = await execa('nvidia-smi', ['--query-gpu=index,name,memory.total,memory.used,utilization.gpu', '--format=csv,noheader,nounits'], { reject: false, timeout: 10_000 });
  if (result.failed || result.exitCode !== 0) return [];
  const out: GpuDeviceReading[] = [];
  for (const line of result.stdout.split('\n')) {
    const [index, name, total, used, utilization] = line.split(',').map((v) => v.trim());
    // A field nvidia-smi cannot read is `[N/A]`: such a GPU is left out rather than shown as empty.
    if (!index || !Number.isInteger(Number(index)) || !Number.isFinite(Number(total)) || !Number.isFinite(Number(used))) continue;
    const util = Number(utilization);
    out.push({ index: Number(index), name: name ?? '', memoryTotalBytes: Number(total) * MIB, memoryUsedBytes: Number(used) * MIB, utilizationPercent: utilization !== '' && Number.isFinite(util) ? util : null });
  }
  return out;
}

/** `key, MiB` rows (nvidia-smi's csv without header or units) into key to bytes, summing repeated keys. */
export function parseRows(text: string): Record<number, number> {
  const out: Record<number, number> = {};
  for (const line of text.split('\n')) {
    const [key, mib] = line.split(',').map((v) => v.trim());
    const k = Number(key);
    const v = Number(mib);
    if (key === '' || !Number.isInteger(k) || !Number.isFinite(v)) continue;
    out[k] = (out[k] ?? 0) + v * MIB;
  }
  return out;
}

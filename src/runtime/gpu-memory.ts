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
  return parseDeviceRows(result.stdout);
}

/**
 * nvidia-smi's `index, name, memory.total, memory.used, utilization.gpu` rows (csv, no
 * header, no units). A field it cannot read is `[N/A]` (or `[Not Supported]`): a GPU
 * without its memory figures is left out rather than shown as empty; one without a
 * utilization figure has it null.
 */
export function parseDeviceRows(text: string): GpuDeviceReading[] {
  const out: GpuDeviceReading[] = [];
  for (const line of text.split('\n')) {
    const fields = line.split(',').map((v) => v.trim());
    if (fields.length < 5) continue;
    // A GPU's name may itself hold a comma: the numbers are the last three fields.
    const [index, ...rest] = fields;
    const [total, used, utilization] = rest.splice(-3);
    const name = rest.join(', ');
    if (!index || !Number.isInteger(Number(index)) || !isNumber(total) || !isNumber(used)) continue;
    out.push({ index: Number(index), name, memoryTotalBytes: Number(total) * MIB, memoryUsedBytes: Number(used) * MIB, utilizationPercent: isNumber(utilization) ? Number(utilization) : null });
  }
  return out;
}

function isNumber(field: string | undefined): boolean {
  return field !== undefined && field !== '' && Number.isFinite(Number(field));
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

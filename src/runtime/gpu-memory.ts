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

import { readFileSync } from 'node:fs';
import os from 'node:os';

export interface HostMemory {
  total_bytes: number;
  /** What the kernel says new work can take without swapping (MemAvailable): free memory plus reclaimable cache. */
  available_bytes: number;
  used_bytes: number;
}

/** The host's memory now, from /proc/meminfo (Node's freemem counts the page cache as used). */
export function hostMemory(): HostMemory {
  try {
    const text = readFileSync('/proc/meminfo', 'latin1');
    const total = kib(text, 'MemTotal');
    const available = kib(text, 'MemAvailable');
    if (total !== null && available !== null) return { total_bytes: total, available_bytes: available, used_bytes: total - available };
  } catch {
    // Not Linux: the portable figures below.
  }
  const total = os.totalmem();
  const free = os.freemem();
  return { total_bytes: total, available_bytes: free, used_bytes: total - free };
}

function kib(text: string, field: string): number | null {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text);
  return match ? Number(match[1]) * 1024 : null;
}

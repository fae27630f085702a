import { readFileSync } from 'node:fs';

/**
 * The replica's resident memory for the PONG's stats (docs/runtime-protocol.md,
 * "Stats"): this process and the engine processes it drives. On llama-server the
 * weights and the KV cache are the server's, so this process alone would report
 * only the runtime, and the memory budget would count a replica at a fraction of
 * what it holds. A process that has gone, or a host without /proc, adds nothing.
 */
export function residentBytes(enginePids: readonly number[]): number {
  let total = process.memoryUsage.rss();
  for (const pid of enginePids) total += vmRss(pid);
  return total;
}

function vmRss(pid: number): number {
  try {
    // In kB whatever the page size (statm counts pages, which are 64 KiB on some arm64 kernels).
    const found = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'latin1'));
    return found ? Number(found[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

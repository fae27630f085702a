import { readdirSync, readFileSync } from 'node:fs';

/** Linux's USER_HZ: the unit of /proc's CPU times, fixed at 100 for user space on every architecture. */
const CLOCK_TICKS_PER_S = 100;

/** CPU time (in clock ticks) and resident memory of a process and every process below it. */
export interface TreeUsage {
  cpuTicks: number;
  rssBytes: number;
}

/**
 * Reads /proc for a replica's runtime and its children: a runtime may drive an engine
 * process of its own (llama.cpp's llama-server), whose CPU is the replica's too. Null
 * when the process is not on this host (a cluster node's) or has gone.
 */
export function treeUsage(pid: number): TreeUsage | null {
  const own = processUsage(pid);
  if (!own) return null;
  const total = { ...own };
  const seen = new Set([pid]);
  const queue = childrenOf(pid);
  // Bounded: a pid is read once, and a process tree is finite.
  while (queue.length > 0) {
    const child = queue.pop()!;
    if (seen.has(child)) continue;
    seen.add(child);
    const usage = processUsage(child);
    if (!usage) continue;
    total.cpuTicks += usage.cpuTicks;
    total.rssBytes += usage.rssBytes;
    queue.push(...childrenOf(child));
  }
  return total;
}

/** CPU %, 100 being one core busy, between two readings of the same tree `seconds` apart. */
export function cpuPercent(before: TreeUsage, after: TreeUsage, seconds: number): number {
  // A child that exited took its ticks with it: never a negative share.
  return Math.max(0, ((after.cpuTicks - before.cpuTicks) / CLOCK_TICKS_PER_S / seconds) * 100);
}

function processUsage(pid: number): TreeUsage | null {
  let stat: string;
  let status: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    status = readFileSync(`/proc/${pid}/status`, 'latin1');
  } catch {
    return null;
  }
  // The command name (field 2) is in parentheses and may hold spaces: count from after it.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the name.
  const cpuTicks = Number(fields[11]) + Number(fields[12]);
  const rss = /^VmRSS:\s+(\d+) kB/m.exec(status);
  return { cpuTicks: Number.isFinite(cpuTicks) ? cpuTicks : 0, rssBytes: rss ? Number(rss[1]) * 1024 : 0 };
}

/** Children of every thread of a process (a child belongs to the thread that forked it). */
function childrenOf(pid: number): number[] {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const out: number[] = [];
  for (const task of tasks) {
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/task/${task}/children`, 'latin1');
    } catch {
      continue;
    }
    for (const part of text.split(' ')) if (part !== '' && part !== '\n') out.push(Number(part));
  }
  return out;
}

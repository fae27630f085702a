import { readFileSync } from 'node:fs';

// USER_HZ: Linux reports utime and stime in 1/100 s on every platform Node runs on.
const TICKS_PER_S = 100;

/** utime + stime of a process (all its threads), in seconds: /proc/<pid>/stat fields 14 and 15. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_S;
}

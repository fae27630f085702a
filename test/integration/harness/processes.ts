import { readFileSync } from 'node:fs';

/**
 * Whether a process with this pid is running. A zombie counts as gone: it has exited
 * and only waits for a parent that may never reap it (a re-parented orphan in a
 * container whose pid 1 does not reap).
 */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The state follows the parenthesised command name, which may itself hold spaces.
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** Polls `check` every 100 ms until it is true or `ms` pass; returns the last answer. */
export async function waitFor(check: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check()) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Pids of the processes `match` picks, by their command line (arguments joined by spaces) and parent pid. */
export async function processPids(match: (p: { pid: number; cmdline: string; ppid: number }) => boolean): Promise<number[]> {
  const { readdir, readFile } = await import('node:fs/promises');
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = (await readFile(`/proc/${entry}/cmdline`, 'utf8')).split('\0').join(' ');
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8');
      // The parent pid follows the state, after the parenthesised command name.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (match({ pid: Number(entry), cmdline, ppid })) pids.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return pids;
}

/** Pids of live `hangar_runtime` processes whose command line mentions `marker` (e.g. the test's home folder). */
export function runtimePids(marker: string): Promise<number[]> {
  return processPids(({ pid, cmdline }) => cmdline.includes('hangar_runtime') && cmdline.includes(marker) && isAlive(pid));
}

/** The TCP ports process `pid` listens on (from its socket inodes and /proc/net/tcp{,6}). */
export async function listeningPorts(pid: number): Promise<number[]> {
  const { readdir, readlink, readFile } = await import('node:fs/promises');
  const inodes = new Set<string>();
  for (const fd of await readdir(`/proc/${pid}/fd`)) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
    const m = /^socket:\[(\d+)\]$/.exec(target);
    if (m) inodes.add(m[1]!);
  }
  const ports = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const lines = (await readFile(table, 'utf8').catch(() => '')).split('\n').slice(1);
    for (const line of lines) {
      const cols = line.trim().split(/\s+/);
      // local_address is HEX_IP:HEX_PORT; state 0A is LISTEN; the inode is column 10.
      if (cols[3] === '0A' && inodes.has(cols[9]!)) ports.add(parseInt(cols[1]!.split(':')[1]!, 16));
    }
  }
  return [...ports];
}

import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat's utime and stime (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** CPU time a process used so far (utime + stime, every thread), in ms; undefined once it is gone. */
export function processCpuMs(pid: number): number | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // Fields after "(comm)": state is field 3, utime 14, stime 15 (1-based, proc(5)).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

/** The pid whose command line contains `needle` (first found), e.g. the Kafka broker's JVM ("kafka.Kafka"). */
export function findProcess(needle: string): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').some((arg) => arg.includes(needle))) return Number(entry);
    } catch {
      /* gone meanwhile */
    }
  }
  return undefined;
}

/**
 * The pid of the process listening on this local TCP port (/proc/net/tcp{,6}: the socket's inode,
 * then the process holding it), e.g. the broker behind --kafka when several run on the machine.
 */
export function listeningPid(port: number): number | undefined {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // local_address is HEXIP:HEXPORT; state 0A is LISTEN; inode is field 10.
      if (fields[3] === '0A' && parseInt(fields[1]?.split(':')[1] ?? '', 16) === port) inodes.add(fields[9]!);
    }
  }
  if (inodes.size === 0) return undefined;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      for (const fd of readdirSync(`/proc/${entry}/fd`)) {
        const link = readlinkSync(`/proc/${entry}/fd/${fd}`);
        if (link.startsWith('socket:[') && inodes.has(link.slice(8, -1))) return Number(entry);
      }
    } catch {
      /* gone meanwhile, or not ours to read */
    }
  }
  return undefined;
}

/** Busy ms of the whole machine (every process, kernel, interrupts) from /proc/stat. */
export function machineBusyMs(): number {
  const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
  const [user, nice, system, , , irq, softirq, steal] = fields.map(Number);
  return ((user! + nice! + system! + irq! + softirq! + steal!) * 1000) / TICKS_PER_SECOND;
}

/** Each role's processes (a role may have many: the PostgreSQL backends, two effectd instances). */
export type RolePids = Record<string, readonly number[]>;

export interface CpuSample {
  /** ms per pid, per role. */
  byRole: Record<string, Map<number, number>>;
  machine: number;
}

export function sampleCpu(roles: RolePids): CpuSample {
  const byRole: Record<string, Map<number, number>> = {};
  for (const [role, pids] of Object.entries(roles)) {
    const used = new Map<number, number>();
    for (const pid of pids) {
      const ms = processCpuMs(pid);
      if (ms !== undefined) used.set(pid, ms);
    }
    byRole[role] = used;
  }
  return { byRole, machine: machineBusyMs() };
}

/**
 * CPU ms each role used between two samples. A process present in `after` only (a new backend)
 * counts from zero; one that exited before `after` is lost (its last interval is not seen).
 */
export function cpuDelta(before: CpuSample, after: CpuSample): Record<string, number> {
  const delta: Record<string, number> = { machine: after.machine - before.machine };
  for (const [role, used] of Object.entries(after.byRole)) {
    let sum = 0;
    for (const [pid, ms] of used) sum += ms - (before.byRole[role]?.get(pid) ?? 0);
    delta[role] = sum;
  }
  return delta;
}

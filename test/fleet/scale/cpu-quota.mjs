// A CPU quota for one process: its own cgroup under the cgroup v1 cpu controller, with
// cpu.cfs_quota_us / cpu.cfs_period_us = the CPUs it may use. Only that process (all its threads:
// a pid written to cgroup.procs moves the whole thread group) goes in; what it forks later follows.
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const CPU_ROOT = process.env.EFFECTD_CGROUP_CPU ?? '/sys/fs/cgroup/cpu';
const PERIOD_US = 100_000;

export function quotaRoot(name) {
  if (!existsSync(join(CPU_ROOT, 'cpu.cfs_quota_us'))) {
    throw new Error(`no cgroup v1 cpu controller at ${CPU_ROOT} (cpu.cfs_quota_us missing): mount it, or set EFFECTD_CGROUP_CPU to where it is mounted`);
  }
  return join(CPU_ROOT, name);
}

/** Creates (or reuses) <root>/<name> with `cpus` CPUs of quota and moves `pid` into it. */
export function confine(root, name, pid, cpus) {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'cpu.cfs_period_us'), String(PERIOD_US));
  writeFileSync(join(dir, 'cpu.cfs_quota_us'), String(Math.round(cpus * PERIOD_US)));
  writeFileSync(join(dir, 'cgroup.procs'), String(pid));
  const mine = readFileSync(`/proc/${pid}/cgroup`, 'utf8').split('\n').find((l) => /:cpu(,|:)/.test(l) || /:cpu,cpuacct:/.test(l));
  if (!mine?.endsWith(dir.slice(CPU_ROOT.length))) throw new Error(`pid ${pid} is not in ${dir} after the move (${mine})`);
  return { dir, cpus };
}

/** cpu.stat of the group: periods, throttled periods, throttled time (ns). */
export function cpuStat(dir) {
  return Object.fromEntries(readFileSync(join(dir, 'cpu.stat'), 'utf8').trim().split('\n').map((l) => l.split(' ')).map(([k, v]) => [k, Number(v)]));
}

/** Removes the groups (they must be empty: their processes gone). */
export function removeQuotaRoot(root) {
  if (!existsSync(root)) return;
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      try {
        rmdirSync(join(root, entry.name));
      } catch {
        /* a process still in it */
      }
    }
  }
  try {
    rmdirSync(root);
  } catch {
    /* not empty yet */
  }
}

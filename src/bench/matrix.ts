import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BENCH_TIMINGS, benchConfig } from './bench-config.js';
import { runCell, type CellResult, type CellSpec, type EffectdLane } from './cell-runner.js';
import { EffectdFleet } from './effectd-fleet.js';
import { FAULT_SPECS } from './faults.js';
import { FAULTS, type FaultName, type PolicyName } from './names.js';
import { ProviderProxy } from './provider-proxy.js';
import type { ProviderKind } from './workloads.js';

export interface MatrixOptions {
  workloads: string[];
  faults: FaultName[];
  policies: PolicyName[];
  seeds: number[];
  /** Baseline cells run this many at a time; effectd cells run one at a time (they share effectd). */
  concurrency: number;
  /** A ledger for the effectd instances (postgres://…); default SQLite in the bench's work dir. */
  ledgerUrl?: string;
  redecide?: number;
  onCell?(result: CellResult, progress: Progress): void;
}

export interface Progress {
  done: number;
  total: number;
  elapsedMs: number;
  etaMs: number;
}

export interface MatrixRun {
  results: CellResult[];
  elapsedMs: number;
  /** effectd processes started (restarts after SIGKILL included). */
  effectdStarts: number;
  /** effectd's own log, kept when a cell broke. */
  effectdLog?: string;
}

const KINDS: ProviderKind[] = ['payments', 'email', 'cloud', 'weak'];

/** What an effectd cell costs before one has been measured: a SIGKILLed claim waits out its lease. */
const EFFECTD_CELL_PRIOR_MS: Record<FaultName, number> = {
  'before-dispatch': 300, 'before-mutation': 800, 'after-mutation': 500, 'before-record': 2_700, cancel: 400, 'late-commit': 1_100,
  'crash-restart': 2_700, rebalance: 400, 'key-expired': 1_000, 'param-drift': 300, none: 100,
};

export function planCells(options: Pick<MatrixOptions, 'workloads' | 'faults' | 'policies' | 'seeds'>): CellSpec[] {
  const cells: CellSpec[] = [];
  for (const seed of options.seeds)
    for (const fault of options.faults)
      for (const workload of options.workloads)
        for (const policy of options.policies) cells.push({ index: cells.length, workload, fault, policy, seed });
  return cells;
}

/**
 * Runs workloads × faults × policies × seeds. effectd cells go one at a time through one set of
 * effectd processes (ordered by fault, so the second instance and the short-key instance only run
 * while their cells do); baseline cells run alongside, a few at a time.
 */
export async function runMatrix(options: MatrixOptions): Promise<MatrixRun> {
  const started = Date.now();
  const cells = planCells(options);
  const faultOrder = (f: FaultName) => FAULTS.indexOf(f);
  const effectdCells = cells.filter((c) => c.policy === 'effectd').sort((a, b) => faultOrder(a.fault) - faultOrder(b.fault) || a.index - b.index);
  const baselineCells = cells.filter((c) => c.policy !== 'effectd');
  const runTag = Date.now().toString(36).slice(-5);
  const results: CellResult[] = [];
  const measured = new Map<string, { n: number; ms: number }>();
  const costOf = (cell: CellSpec) => {
    const lane = cell.policy === 'effectd' ? `effectd/${cell.fault}` : 'baseline';
    const seen = measured.get(lane);
    return seen ? seen.ms / seen.n : cell.policy === 'effectd' ? EFFECTD_CELL_PRIOR_MS[cell.fault] : 400;
  };

  const record = (result: CellResult) => {
    results.push(result);
    const lane = result.policy === 'effectd' ? `effectd/${result.fault}` : 'baseline';
    const seen = measured.get(lane) ?? { n: 0, ms: 0 };
    measured.set(lane, { n: seen.n + 1, ms: seen.ms + result.elapsedMs });
    const pending = cells.filter((c) => !results.some((r) => sameCell(c, r)));
    const effectdLeft = pending.filter((c) => c.policy === 'effectd').reduce((s, c) => s + costOf(c), 0);
    const baselineLeft = pending.filter((c) => c.policy !== 'effectd').reduce((s, c) => s + costOf(c), 0) / Math.max(1, options.concurrency);
    options.onCell?.(result, { done: results.length, total: cells.length, elapsedMs: Date.now() - started, etaMs: Math.max(effectdLeft, baselineLeft) });
  };

  const workDir = mkdtempSync(join(tmpdir(), 'effectd-bench-'));
  let lane: EffectdLane | undefined;
  let broken = false;
  try {
    if (effectdCells.length > 0) {
      try {
        lane = await openLane(workDir, options.ledgerUrl);
      } catch (error) {
        broken = true; // keep the work dir: effectd's log is in it
        throw error;
      }
    }
    const runOne = async (cell: CellSpec) => {
      try {
        record(await runCell(cell, { runTag, lane: cell.policy === 'effectd' ? lane : undefined, redecide: cell.policy === 'effectd' ? options.redecide : undefined }));
      } catch (error) {
        broken = true;
        record(brokenCell(cell, error));
      }
    };
    const effectdLane = async () => {
      for (const cell of effectdCells) {
        const spec = FAULT_SPECS[cell.fault];
        try {
          // Only the instances this cell needs are running, and they are up before its clock starts.
          if (spec.needsSecondary) await lane!.fleet.secondary();
          else await lane!.fleet.stopSecondary();
          if (spec.shortKeys) await lane!.fleet.shortKeys();
          else await lane!.fleet.stopShortKeys();
          if (!lane!.fleet.primary.running) await lane!.fleet.primary.start();
        } catch (error) {
          broken = true;
          record(brokenCell(cell, error));
          continue;
        }
        await runOne(cell);
      }
    };
    const queue = [...baselineCells];
    const baselineWorker = async () => {
      for (let cell = queue.shift(); cell; cell = queue.shift()) await runOne(cell);
    };
    await Promise.all([effectdLane(), ...Array.from({ length: Math.max(1, options.concurrency) }, baselineWorker)]);
  } finally {
    if (lane) {
      await lane.fleet.close();
      await Promise.all(Object.values(lane.proxies).map((p) => p.close()));
    }
    if (!broken) rmSync(workDir, { recursive: true, force: true });
  }
  results.sort((a, b) => cells.findIndex((c) => sameCell(c, a)) - cells.findIndex((c) => sameCell(c, b)));
  return { results, elapsedMs: Date.now() - started, effectdStarts: lane?.fleet.starts ?? 0, ...(broken && lane ? { effectdLog: lane.fleet.logFile } : {}) };
}

async function openLane(workDir: string, ledgerUrl: string | undefined): Promise<EffectdLane> {
  const proxies = {} as Record<ProviderKind, ProviderProxy>;
  for (const kind of KINDS) proxies[kind] = await ProviderProxy.start();
  const urls = Object.fromEntries(KINDS.map((k) => [k, proxies[k].url])) as Record<ProviderKind, string>;
  const config = join(workDir, 'effectd.config.json');
  const shortKeysConfig = join(workDir, 'effectd-short-keys.config.json');
  writeFileSync(config, JSON.stringify(benchConfig(urls, BENCH_TIMINGS.longRetentionMs), null, 2));
  writeFileSync(shortKeysConfig, JSON.stringify(benchConfig(urls, BENCH_TIMINGS.shortRetentionMs), null, 2));
  const fleet = new EffectdFleet({ root: workDir, config, shortKeysConfig, ...(ledgerUrl ? { ledgerUrl } : {}) });
  try {
    await fleet.primary.start();
  } catch (error) {
    await fleet.close();
    await Promise.all(Object.values(proxies).map((p) => p.close()));
    throw error;
  }
  return { fleet, proxies };
}

function sameCell(spec: CellSpec, result: CellResult): boolean {
  return spec.workload === result.workload && spec.fault === result.fault && spec.policy === result.policy && spec.seed === result.seed;
}

function brokenCell(cell: CellSpec, error: unknown): CellResult {
  return {
    workload: cell.workload, fault: cell.fault, policy: cell.policy, seed: cell.seed,
    declared: 0, duplicates: 0, missing: 0, falseDedup: 0, unresolved: 0, escalations: 0, timeInUnknownMs: 0, wrongReceipt: 0,
    latencyMs: { p50: 0, p99: 0 }, faultInjected: 0, toolCalls: 0, providerRequests: 0, elapsedMs: 0, workflowId: '', intents: [], transcript: [],
    error: (error as Error).stack ?? String(error),
  };
}

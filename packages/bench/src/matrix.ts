import { createWriteStream, mkdirSync, mkdtempSync, rmSync, writeFileSync, type WriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BENCH_TIMINGS, BENCH_TOOL_NAMES, benchConfig } from './bench-config.js';
import { runCell, type CellResult, type CellSpec, type EffectdLane } from './cell-runner.js';
import { EffectdFleet } from './effectd-fleet.js';
import { faultApplies } from './faults.js';
import { faultSpec } from './fault-registry.js';
import { KafkaPair, kafkaUnreachable } from './kafka-lane.js';
import { FAULTS, isEffectd, isFault, isMcpPolicy, MCP_FAULTS, type BenchPolicy, type DesignFaultName, type FaultName } from './names.js';
import { ProviderProxy } from './provider-proxy.js';
import { failAtValues } from './saga-plans.js';
import { workload as findWorkload } from './workloads.js';

export interface MatrixOptions {
  /** The cells to run, when a lane plans its own (LIMBO's cases); otherwise workloads × faults × policies × seeds. */
  cells?: CellSpec[];
  workloads: string[];
  faults: FaultName[];
  policies: BenchPolicy[];
  seeds: number[];
  /** Baseline cells run this many at a time. */
  concurrency: number;
  /** effectd cells over HTTP run in this many lanes, each its own set of effectd processes and proxies (default 2). */
  httpLanes?: number;
  /** A ledger for the effectd instances (postgres://…); default SQLite in the bench's work dir. */
  ledgerUrl?: string;
  redecide?: number;
  /** Faults the `effectd+redecide` column runs (default: all of `faults`). */
  redecideFaults?: FaultName[];
  /** Saga workloads: every failAt in every cell (`all`), or one per fault, rotating with the seed, so a run covers each at least once (`sample`). */
  failAt?: 'all' | 'sample';
  /** Brokers for the rebalance cells' Kafka ingress; `false` runs them over HTTP (a second instance on the same ledger). */
  kafka?: string[] | false;
  onCell?(result: CellResult, progress: Progress): void;
  /** Said once, before the cells run (e.g. that Kafka is not reachable and rebalance falls back to HTTP). */
  onNote?(note: string): void;
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
  /** How the rebalance cells reached effectd, and why when not over Kafka. */
  rebalanceIngress: { kind: 'kafka'; brokers: string[] } | { kind: 'http'; why: string };
  notes: string[];
  /** effectd's own log, kept when a cell broke. */
  effectdLog?: string;
}

/** What an effectd cell costs before one has been measured (ms): a SIGKILLed claim waits out its lease. */
const EFFECTD_CELL_PRIOR_MS: Record<DesignFaultName, number> = {
  'before-dispatch': 300, 'before-mutation': 800, 'after-mutation': 500, 'before-record': 2_700, cancel: 400, 'late-commit': 1_100,
  'crash-restart': 2_700, rebalance: 400, 'key-expired': 1_000, 'param-drift': 300, 'stored-failure': 1_500, 'retention-shorter-than-declared': 2_500, 'late-delivery': 5_000, none: 100,
};
const SAGA_PRIOR_FACTOR = 2.5;
/** An effectd cell under one of LIMBO's faults, before one has been measured (ms). */
const LIMBO_CELL_PRIOR_MS = 2_000;
const priorOf = (fault: FaultName) => (isFault(fault) ? EFFECTD_CELL_PRIOR_MS[fault] : LIMBO_CELL_PRIOR_MS);
/** Where a fault comes in the run's order: the design's first, in their order, then LIMBO's. */
const faultOrder = (fault: FaultName) => (isFault(fault) ? FAULTS.indexOf(fault) : FAULTS.length);

/**
 * The faults `effectd+redecide` runs in --quick: the reply is lost before or after the provider
 * acted, or the provider commits late (the agent reads `unknown` and decides again while the first
 * effect is open, done or proven absent), the model rewords its repair, or the request reaches the
 * provider after a proof of absence (the held re-decision is released and sent: a late arrival to
 * detect). The full matrix runs it under every fault.
 */
export const REDECIDE_QUICK_FAULTS: FaultName[] = ['before-mutation', 'after-mutation', 'late-commit', 'param-drift', 'late-delivery'];
const KAFKA_REBALANCE_PRIOR_MS = 8_000;

export function planCells(options: Pick<MatrixOptions, 'workloads' | 'faults' | 'policies' | 'seeds' | 'redecideFaults' | 'failAt'>): CellSpec[] {
  const cells: CellSpec[] = [];
  for (const seed of options.seeds)
    for (const fault of options.faults)
      for (const name of options.workloads) {
        const found = findWorkload(name);
        // A fault that cannot reach any of the workload's intents has no cells there (docs/benchmark.md, "Faults").
        if (found && !faultApplies(faultSpec(fault), found)) continue;
        const plan = found?.saga;
        const failAts = plan ? failAtValues(plan) : [undefined];
        // Sampling rotates the refused step with the fault (and the seed), so 11 faults cover every step of a saga.
        const chosen = plan && options.failAt === 'sample' ? [failAts[(faultOrder(fault) + seed - 1) % failAts.length]] : failAts;
        for (const failAt of chosen)
          for (const policy of options.policies) {
            // The re-deciding model is a model of per-step decisions: a saga is one decision (its start).
            if (policy === 'effectd+redecide' && (plan || !(options.redecideFaults ?? options.faults).includes(fault))) continue;
            // The MCP lane: the per-step workloads (a saga is started over /v1/sagas), under the faults it runs (names.ts, MCP_FAULTS).
            if (isMcpPolicy(policy) && (plan || !MCP_FAULTS.includes(fault))) continue;
            cells.push({ index: cells.length, workload: name, fault, policy, seed, ...(failAt !== undefined ? { failAt } : {}) });
          }
      }
  return cells;
}

/**
 * Runs workloads × faults × policies × seeds. effectd cells run one at a time per lane: HTTP lanes
 * (each its own effectd processes and proxies, cells grouped by fault so the second instance and
 * the short-key instance only run while their cells do) and, for rebalance, a Kafka lane (two
 * instances in one consumer group). Baseline cells run alongside, a few at a time.
 */
export async function runMatrix(options: MatrixOptions): Promise<MatrixRun> {
  const started = Date.now();
  const cells = options.cells ?? planCells(options);
  const effectdCells = cells.filter((c) => isEffectd(c.policy));
  const baselineCells = cells.filter((c) => !isEffectd(c.policy));
  const runTag = Date.now().toString(36).slice(-5);
  const results: CellResult[] = [];
  const notes: string[] = [];
  const note = (text: string) => {
    notes.push(text);
    options.onNote?.(text);
  };
  const measured = new Map<string, { n: number; ms: number }>();
  const laneOf = (cell: CellSpec) => (isEffectd(cell.policy) ? `effectd/${cell.fault}/${findWorkload(cell.workload)?.saga ? 'saga' : 'intents'}` : 'baseline');
  const prior = (cell: CellSpec, kafka: boolean) => {
    if (!isEffectd(cell.policy)) return 400;
    if (kafka && cell.fault === 'rebalance') return KAFKA_REBALANCE_PRIOR_MS;
    return priorOf(cell.fault) * (findWorkload(cell.workload)?.saga ? SAGA_PRIOR_FACTOR : 1);
  };

  const workDir = mkdtempSync(join(tmpdir(), 'effectd-bench-'));
  const log = createWriteStream(join(workDir, 'effectd.log'), { flags: 'a' });
  const lanes: EffectdLane[] = [];
  const fleets: EffectdFleet[] = [];
  let kafkaPair: KafkaPair | undefined;
  let rebalanceIngress: MatrixRun['rebalanceIngress'] = { kind: 'http', why: 'no rebalance cell in this run' };
  let broken = false;
  try {
    // Rebalance cells of effectd go over Kafka when a broker answers; otherwise over HTTP, and the run says so.
    const rebalanceCells = effectdCells.filter((c) => c.fault === 'rebalance');
    let kafkaCells: CellSpec[] = [];
    if (rebalanceCells.length > 0) {
      if (options.kafka === false) {
        rebalanceIngress = { kind: 'http', why: 'Kafka was turned off (--no-kafka)' };
      } else {
        const brokers = options.kafka ?? ['127.0.0.1:9092'];
        const unreachable = await kafkaUnreachable(brokers);
        if (unreachable) {
          rebalanceIngress = { kind: 'http', why: `Kafka at ${brokers.join(',')} is not reachable (${unreachable})` };
        } else {
          const proxies = await openProxies();
          try {
            const config = join(workDir, 'effectd-kafka.config.json');
            writeFileSync(config, JSON.stringify(benchConfig(urlsOf(proxies), BENCH_TIMINGS.longRetentionMs), null, 2));
            const dir = join(workDir, 'kafka');
            mkdirSync(dir, { recursive: true });
            kafkaPair = await KafkaPair.open({ root: dir, brokers, runTag, config, log });
            lanes.push({ kind: 'kafka', name: 'kafka', pair: kafkaPair, proxies });
            kafkaCells = rebalanceCells;
            rebalanceIngress = { kind: 'kafka', brokers };
          } catch (error) {
            broken = true; // keep the work dir: the log says why
            await Promise.all(Object.values(proxies).map((p) => p.close()));
            rebalanceIngress = { kind: 'http', why: `the Kafka lane could not start (${(error as Error).message.split('\n')[0]}; effectd's log: ${join(workDir, 'effectd.log')})` };
          }
        }
      }
      if (rebalanceIngress.kind === 'http') note(`NOTE: rebalance cells of effectd run over HTTP (a second instance on the same ledger), not Kafka: ${rebalanceIngress.why}.`);
      else note(`rebalance cells of effectd run over Kafka (${rebalanceIngress.brokers.join(',')}): two effectd instances in one consumer group; the fault SIGKILLs the one holding the workflow's partition.`);
    }

    // The other effectd cells go to HTTP lanes: whole faults at a time, heaviest first, to the least loaded lane.
    const httpCells = effectdCells.filter((c) => !kafkaCells.includes(c));
    const laneCount = Math.max(1, Math.min(options.httpLanes ?? 2, new Set(httpCells.map((c) => c.fault)).size));
    const httpQueues: CellSpec[][] = Array.from({ length: httpCells.length > 0 ? laneCount : 0 }, () => []);
    const load = httpQueues.map(() => 0);
    const groups = [...new Set(httpCells.map((c) => c.fault))].map((fault) => httpCells.filter((c) => c.fault === fault))
      .sort((a, b) => b.reduce((s, c) => s + prior(c, false), 0) - a.reduce((s, c) => s + prior(c, false), 0));
    for (const group of groups) {
      const i = load.indexOf(Math.min(...load));
      httpQueues[i]!.push(...group);
      load[i]! += group.reduce((s, c) => s + prior(c, false), 0);
    }
    for (const queue of httpQueues) queue.sort((a, b) => faultOrder(a.fault) - faultOrder(b.fault) || a.index - b.index);
    for (let i = 0; i < httpQueues.length; i++) {
      try {
        const lane = await openHttpLane(workDir, `http-${i + 1}`, options.ledgerUrl, log);
        fleets.push(lane.fleet);
        lanes.push(lane);
      } catch (error) {
        broken = true; // keep the work dir: effectd's log is in it
        throw error;
      }
    }
    const queues = new Map<EffectdLane, CellSpec[]>();
    let h = 0;
    for (const lane of lanes) queues.set(lane, lane.kind === 'kafka' ? kafkaCells : httpQueues[h++]!);

    const costOf = (cell: CellSpec) => {
      const seen = measured.get(laneOf(cell));
      return seen ? seen.ms / seen.n : prior(cell, kafkaCells.includes(cell));
    };
    const record = (result: CellResult, spec: CellSpec) => {
      results.push(result);
      const key = laneOf(spec) + (result.ingress === 'kafka' ? '/kafka' : '');
      const seen = measured.get(key) ?? { n: 0, ms: 0 };
      measured.set(key, { n: seen.n + 1, ms: seen.ms + result.elapsedMs });
      const pending = cells.filter((c) => !results.some((r) => sameCell(c, r)));
      const laneLeft = [...queues.values()].map((queue) => queue.filter((c) => pending.includes(c)).reduce((s, c) => s + costOf(c), 0));
      const baselineLeft = pending.filter((c) => !isEffectd(c.policy)).reduce((s, c) => s + costOf(c), 0) / Math.max(1, options.concurrency);
      options.onCell?.(result, { done: results.length, total: cells.length, elapsedMs: Date.now() - started, etaMs: Math.max(baselineLeft, ...laneLeft) });
    };
    const runOne = async (cell: CellSpec, lane: EffectdLane | undefined) => {
      try {
        record(await runCell(cell, { runTag, ...(lane ? { lane } : {}), ...(cell.policy === 'effectd' && options.redecide !== undefined ? { redecide: options.redecide } : {}) }), cell);
      } catch (error) {
        broken = true;
        record(brokenCell(cell, error), cell);
      }
    };
    const laneWorker = async (lane: EffectdLane, queue: CellSpec[]) => {
      for (const cell of queue) {
        const spec = faultSpec(cell.fault);
        try {
          // Only the instances this cell needs are running, and they are up before its clock starts.
          if (lane.kind === 'kafka') {
            await lane.pair.ready();
          } else {
            if (spec.needsSecondary) await lane.fleet.secondary();
            else await lane.fleet.stopSecondary();
            if (spec.shortKeys) await lane.fleet.shortKeys();
            else await lane.fleet.stopShortKeys();
            if (!lane.fleet.primary.running) await lane.fleet.primary.start();
          }
        } catch (error) {
          broken = true;
          record(brokenCell(cell, error), cell);
          continue;
        }
        await runOne(cell, lane);
      }
    };
    const queue = [...baselineCells];
    const baselineWorker = async () => {
      for (let cell = queue.shift(); cell; cell = queue.shift()) await runOne(cell, undefined);
    };
    await Promise.all([...[...queues].map(([lane, cells]) => laneWorker(lane, cells)), ...Array.from({ length: Math.max(1, options.concurrency) }, baselineWorker)]);
  } finally {
    await kafkaPair?.close().catch(() => undefined);
    await Promise.all(fleets.map((f) => f.close()));
    await Promise.all(lanes.flatMap((lane) => Object.values(lane.proxies)).map((p) => p.close()));
    await new Promise<void>((resolve) => log.end(() => resolve()));
    if (!broken) rmSync(workDir, { recursive: true, force: true });
  }
  results.sort((a, b) => cells.findIndex((c) => sameCell(c, a)) - cells.findIndex((c) => sameCell(c, b)));
  return {
    results, elapsedMs: Date.now() - started, notes, rebalanceIngress,
    effectdStarts: fleets.reduce((s, f) => s + f.starts, 0) + (kafkaPair ? kafkaPair.instances.reduce((s, i) => s + i.starts, 0) : 0),
    ...(broken ? { effectdLog: join(workDir, 'effectd.log') } : {}),
  };
}

async function openProxies(): Promise<Record<string, ProviderProxy>> {
  const proxies: Record<string, ProviderProxy> = {};
  for (const tool of BENCH_TOOL_NAMES) proxies[tool] = await ProviderProxy.start();
  return proxies;
}

function urlsOf(proxies: Record<string, ProviderProxy>): Record<string, string> {
  return Object.fromEntries(Object.entries(proxies).map(([tool, proxy]) => [tool, proxy.url]));
}

async function openHttpLane(workDir: string, name: string, ledgerUrl: string | undefined, log: WriteStream): Promise<EffectdLane & { kind: 'http' }> {
  const proxies = await openProxies();
  const root = join(workDir, name);
  mkdirSync(root, { recursive: true });
  const config = join(root, 'effectd.config.json');
  const shortKeysConfig = join(root, 'effectd-short-keys.config.json');
  writeFileSync(config, JSON.stringify(benchConfig(urlsOf(proxies), BENCH_TIMINGS.longRetentionMs), null, 2));
  writeFileSync(shortKeysConfig, JSON.stringify(benchConfig(urlsOf(proxies), BENCH_TIMINGS.shortRetentionMs), null, 2));
  const fleet = new EffectdFleet({ root, name, config, shortKeysConfig, log, ...(ledgerUrl ? { ledgerUrl } : {}) });
  try {
    await fleet.primary.start();
  } catch (error) {
    await fleet.close();
    await Promise.all(Object.values(proxies).map((p) => p.close()));
    throw error;
  }
  return { kind: 'http', name, fleet, proxies };
}

function sameCell(spec: CellSpec, result: CellResult): boolean {
  return spec.workload === result.workload && spec.fault === result.fault && spec.policy === result.policy && spec.seed === result.seed && spec.failAt === result.failAt;
}

function brokenCell(cell: CellSpec, error: unknown): CellResult {
  return {
    workload: cell.workload, fault: cell.fault, policy: cell.policy, seed: cell.seed, ...(cell.failAt !== undefined ? { failAt: cell.failAt } : {}),
    declared: 0, duplicates: 0, detectedDuplicates: 0, lateInjected: 0, lateDetected: 0, lateUndetected: 0, missing: 0, falseDedup: 0, unresolved: 0, escalations: 0, timeInUnknownMs: 0, firstAnswers: 0, firstUnknown: 0, wrongReceipt: 0,
    latencyMs: { p50: 0, p99: 0 }, faultInjected: 0, toolCalls: 0, providerRequests: 0, elapsedMs: 0, workflowId: '', intents: [], transcript: [],
    error: (error as Error).stack ?? String(error),
  };
}

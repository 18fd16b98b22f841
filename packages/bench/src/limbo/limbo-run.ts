import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { CellSpec } from '../cell-runner.js';
import { runMatrix } from '../matrix.js';
import { isEffectd, type BenchPolicy } from '../names.js';
import { duration } from '../report-table.js';
import { LIMBO_CASES, LIMBO_QUICK_CASES } from './limbo-cases.js';
import { limboCaseTable, limboPolicyTable, limboPolicyTotals } from './limbo-report.js';
import { CodedError } from '../../../../src/shared/coded-error.js';

export interface LimboRunOptions {
  quick: boolean;
  /** Only the cases under these faults / on these workloads (`--fault`, `--workload`). */
  faults?: string[];
  workloads?: string[];
  policies: BenchPolicy[];
  seeds: number[];
  concurrency: number;
  httpLanes: number;
  json?: string;
  ledgerUrl?: string;
  out(line?: string): void;
}

/**
 * `effectd bench --limbo`: LIMBO's fault modes and the six named cases, each against every policy,
 * through the same cells as the adversarial matrix (real effectd processes, simulated providers),
 * scored by LIMBO's measures. Exit 1 when effectd duplicated or overclaimed, or a cell broke.
 */
export async function runLimbo(options: LimboRunOptions): Promise<number> {
  const { out } = options;
  for (const [flag, names, known] of [['fault', options.faults, LIMBO_CASES.map((c) => c.fault)], ['workload', options.workloads, LIMBO_CASES.map((c) => c.workload)]] as const) {
    const unknown = (names ?? []).filter((n) => !(known as readonly string[]).includes(n));
    if (unknown.length > 0) throw new CodedError('invalid_command', `--limbo --${flag}: no LIMBO case has ${unknown.join(', ')}; choose from ${[...new Set(known)].join(', ')}`);
  }
  const cases = (options.quick ? LIMBO_CASES.filter((c) => LIMBO_QUICK_CASES.includes(c.name)) : LIMBO_CASES)
    .filter((c) => (options.faults ?? [c.fault]).includes(c.fault) && (options.workloads ?? [c.workload]).includes(c.workload));
  // The LIMBO lane compares the four policies; the variants and the MCP lane are the matrix's.
  const policies = options.policies.filter((p) => p !== 'effectd+redecide' && p !== 'effectd-mcp' && p !== 'mcp-direct');
  if (cases.length === 0 || policies.length === 0) throw new CodedError('invalid_command', `--limbo: no cell to run (${cases.length} cases, policies ${policies.join(', ') || 'none of blind, sdk-retry, native-or-never, effectd'})`);
  const cells: CellSpec[] = [];
  for (const seed of options.seeds)
    for (const k of cases)
      for (const policy of policies) cells.push({ index: cells.length, workload: k.workload, fault: k.fault, policy, seed });
  out(`effectd bench --limbo${options.quick ? ' --quick' : ''}: ${cases.length} cases (${cases.filter((c) => c.kind === 'fault mode').length} of LIMBO's fault modes, ${cases.filter((c) => c.kind === 'case').length} named cases) × ${policies.length} policies × ${options.seeds.length} seed${options.seeds.length === 1 ? '' : 's'}: ${cells.length} cells`);
  out('(providers\' clocks run 100× real time where LIMBO\'s times are long, and jump 3 h when the agent is done; ground truth from the providers\' oracles)\n');
  const run = await runMatrix({
    cells, workloads: [...new Set(cases.map((c) => c.workload))], faults: [...new Set(cases.map((c) => c.fault))], policies, seeds: options.seeds,
    concurrency: options.concurrency, httpLanes: options.httpLanes, kafka: false, ...(options.ledgerUrl ? { ledgerUrl: options.ledgerUrl } : {}),
  });
  const results = run.results;
  out('LIMBO\'s measures per policy (task success and exactly-once success: cells; duplicates include compensated ones; overclaim: intents reported done while the provider shows them duplicated or not done):\n');
  out(limboPolicyTable(results));
  out('\nper case (T: task success, E: exactly-once success, one +/- per seed; d/c/o: duplicates / collateral writes / overclaim):\n');
  out(limboCaseTable(results));
  out(`\n${cells.length} cells in ${duration(run.elapsedMs)}.`);
  const file = resolve(options.json ?? join('bench-results', `limbo-${new Date().toISOString().replace(/[:.]/g, '-')}.json`));
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify({ cases, totals: Object.fromEntries(limboPolicyTotals(results)), cells: results }, null, 1)}\n`);
  out(`JSON: ${file}`);

  const broken = results.filter((c) => c.error !== undefined);
  const silent = results.filter((c) => c.fault !== 'none' && c.error === undefined && c.faultInjected === 0);
  const effectd = results.filter((c) => isEffectd(c.policy) && c.limbo && (c.limbo.duplicates > 0 || c.limbo.overclaim > 0));
  if (broken.length > 0) out(`\n${broken.length} cell(s) broke (the benchmark itself failed${run.effectdLog ? `; effectd's log: ${run.effectdLog}` : ''}):\n${broken.map((c) => `  ${c.workload} × ${c.fault} × ${c.policy}: ${(c.error ?? '').split('\n')[0]}`).join('\n')}`);
  if (silent.length > 0) out(`\n${silent.length} faulted cell(s) where the fault never fired (they prove nothing):\n${silent.map((c) => `  ${c.workload} × ${c.fault} × ${c.policy}`).join('\n')}`);
  if (effectd.length > 0) {
    out(`\nFAIL: effectd duplicated or overclaimed in ${effectd.length} cell(s):\n${effectd.map((c) => `  ${c.workload} × ${c.fault} × seed ${c.seed}: ${c.limbo!.duplicates} duplicate(s), ${c.limbo!.overclaim} overclaim`).join('\n')}`);
    return 1;
  }
  if (broken.length > 0 || silent.length > 0) return 1;
  out('\nOK: effectd had no duplicate and no overclaim in any LIMBO cell.');
  return 0;
}

import { SAGA_CHECKS, type CellResult } from './cell-runner.js';
import { BENCH_POLICIES, FAULTS, type BenchPolicy, type FaultName } from './names.js';

/** The per-cell counts that add up across cells. */
const SUMMED = ['declared', 'duplicates', 'missing', 'falseDedup', 'unresolved', 'escalations', 'timeInUnknownMs', 'wrongReceipt', 'toolCalls'] as const;

export type Totals = Pick<CellResult, (typeof SUMMED)[number]> & { cells: number; p50: number; p99: number };

export function totals(cells: readonly CellResult[]): Totals {
  const median = (values: number[]) => (values.length === 0 ? 0 : [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)]!);
  const summed = Object.fromEntries(SUMMED.map((k) => [k, cells.reduce((s, c) => s + c[k], 0)])) as Pick<CellResult, (typeof SUMMED)[number]>;
  return {
    cells: cells.length,
    ...summed,
    p50: median(cells.map((c) => c.latencyMs.p50)),
    p99: cells.reduce((m, c) => Math.max(m, c.latencyMs.p99), 0),
  };
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

const present = <T extends string>(all: readonly T[], cells: readonly CellResult[], pick: (c: CellResult) => T) => all.filter((x) => cells.some((c) => pick(c) === x));

/** duplicates / missing / unresolved per fault and policy, summed over workloads and seeds. */
export function faultTable(cells: readonly CellResult[]): string {
  const policies = present<BenchPolicy>(BENCH_POLICIES, cells, (c) => c.policy);
  const faults = present<FaultName>(FAULTS, cells, (c) => c.fault);
  const cell = (subset: CellResult[]) => {
    if (subset.length === 0) return '-';
    const t = totals(subset);
    return `${t.duplicates}/${t.missing}/${t.unresolved}`;
  };
  const rows = faults.map((fault) => [fault, ...policies.map((policy) => cell(cells.filter((c) => c.fault === fault && c.policy === policy)))]);
  rows.push(['all faults', ...policies.map((policy) => cell(cells.filter((c) => c.policy === policy)))]);
  return table(['dup/missing/unresolved', ...policies], rows);
}

/** Every reported measure, per policy. */
export function policyTable(cells: readonly CellResult[]): string {
  const policies = present<BenchPolicy>(BENCH_POLICIES, cells, (c) => c.policy);
  const rows = policies.map((policy) => {
    const t = totals(cells.filter((c) => c.policy === policy));
    return [policy, t.cells, t.declared, t.duplicates, t.missing, t.falseDedup, t.unresolved, t.escalations, t.timeInUnknownMs, t.wrongReceipt, t.toolCalls, t.p50, t.p99].map(String);
  });
  return table(['policy', 'cells', 'declared', 'duplicates', 'missing', 'falseDedup', 'unresolved', 'escalations', 'unknown ms', 'wrongReceipt', 'calls', 'p50 ms', 'p99 ms'], rows);
}

/**
 * The saga workloads per policy: how the sagas ended (completed / failed and undone / open), and
 * the four "never" checks from the providers' oracles, summed over their cells.
 */
export function sagaTable(cells: readonly CellResult[]): string | undefined {
  const sagas = cells.filter((c) => c.sagaOutcome !== undefined);
  if (sagas.length === 0) return undefined;
  const policies = present<BenchPolicy>(BENCH_POLICIES, sagas, (c) => c.policy);
  const rows = policies.map((policy) => {
    const mine = sagas.filter((c) => c.policy === policy);
    const count = (outcome: string) => String(mine.filter((c) => c.sagaOutcome === outcome).length);
    const sum = (pick: (c: CellResult) => number) => String(mine.reduce((s, c) => s + pick(c), 0));
    return [policy, String(mine.length), count('completed'), count('failed'), count('open'), ...SAGA_CHECKS.map((k) => sum((c) => c[k] ?? 0)), sum((c) => c.leftWithHuman ?? 0), sum((c) => c.duplicates), sum((c) => c.missing), sum((c) => c.unresolved)];
  });
  return table(['saga cells', 'cells', 'completed', 'failed', 'open', 'emailWithoutCharge', 'leftInPlace', 'compensatedTwice', 'phantomCompensation', 'leftWithHuman', 'dup', 'missing', 'unresolved'], rows);
}

const workloadLabel = (c: CellResult) => (c.failAt !== undefined ? `${c.workload}@${c.failAt}` : c.workload);

/** One row per cell (for --verbose). */
export function cellTable(cells: readonly CellResult[]): string {
  const rows = cells.map((c) => [workloadLabel(c), c.fault, c.policy, String(c.seed), String(c.declared), String(c.duplicates), String(c.missing), String(c.falseDedup), String(c.unresolved), String(c.escalations), String(c.timeInUnknownMs), String(c.wrongReceipt), String(c.latencyMs.p50), String(c.latencyMs.p99), String(c.faultInjected), c.error ? 'BROKEN' : '']);
  return table(['workload', 'fault', 'policy', 'seed', 'declared', 'dup', 'missing', 'falseDedup', 'unresolved', 'escal', 'unknown ms', 'wrongRcpt', 'p50', 'p99', 'injected', ''], rows);
}

export function cellLine(c: CellResult): string {
  const name = `${workloadLabel(c)} × ${c.fault} × ${c.policy}${c.seed === 1 ? '' : ` (seed ${c.seed})`}${c.ingress === 'kafka' ? ' [kafka]' : ''}`;
  if (c.error) return `${name}: BROKEN — ${c.error.split('\n')[0]}`;
  const saga = c.sagaOutcome !== undefined ? ` saga ${c.sagaStatus}${SAGA_CHECKS.some((k) => (c[k] ?? 0) > 0) ? ` ${SAGA_CHECKS.map((k) => `${k} ${c[k]}`).join(' ')}` : ''}` : '';
  return `${name.padEnd(60)} dup ${c.duplicates} missing ${c.missing} falseDedup ${c.falseDedup} unresolved ${c.unresolved} escalated ${c.escalations} injected ${c.faultInjected}${saga} (${(c.elapsedMs / 1000).toFixed(1)} s)`;
}

export function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

import { SAGA_CHECKS, type CellResult } from './cell-runner.js';
import { ALL_POLICIES, FAULTS, isEffectd, type BenchPolicy, type FaultName } from './names.js';
import { STRIPE_PROFILE_WORKLOADS } from './workloads.js';

/** The per-cell counts that add up across cells. */
const SUMMED = ['declared', 'duplicates', 'detectedDuplicates', 'lateInjected', 'lateDetected', 'lateUndetected', 'missing', 'falseDedup', 'unresolved', 'escalations', 'timeInUnknownMs', 'firstAnswers', 'firstUnknown', 'wrongReceipt', 'toolCalls'] as const;

export type Totals = Pick<CellResult, (typeof SUMMED)[number]> & { cells: number; p50: number; p99: number };

export function totals(cells: readonly CellResult[]): Totals {
  const median = (values: number[]) => (values.length === 0 ? 0 : [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)]!);
  // `?? 0`: results written before a field existed (late arrivals) add nothing.
  const summed = Object.fromEntries(SUMMED.map((k) => [k, cells.reduce((s, c) => s + (c[k] ?? 0), 0)])) as Pick<CellResult, (typeof SUMMED)[number]>;
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

/**
 * Duplicates (from the providers' oracles), with the ones effectd detected beside them wherever
 * there is something to say — `1 (detected 1)`, or `1 (detected 0)` for an effectd duplicate it
 * missed; a baseline detects nothing, and shows its count alone.
 */
export function duplicatesLabel(duplicates: number, detected: number, policy: BenchPolicy): string {
  return detected > 0 || (isEffectd(policy) && duplicates > 0) ? `${duplicates} (detected ${detected})` : String(duplicates);
}

const present = <T extends string>(all: readonly T[], cells: readonly CellResult[], pick: (c: CellResult) => T) => all.filter((x) => cells.some((c) => pick(c) === x));

/** Late arrivals beside a score, where the fault injected any: `late 1/1 detected` (detected of injected). */
export function lateLabel(t: Pick<Totals, 'lateInjected' | 'lateDetected'>): string {
  return t.lateInjected > 0 ? ` late ${t.lateDetected}/${t.lateInjected} detected` : '';
}

/**
 * duplicates / missing / unresolved per fault and policy, summed over workloads and seeds; the
 * duplicates effectd detected are shown beside its duplicates (`1 (detected 1)/0/0`), and late
 * arrivals, where the fault injected any, after the score (`0/0/0 late 1/1 detected`).
 */
export function faultTable(cells: readonly CellResult[]): string {
  const policies = present<BenchPolicy>(ALL_POLICIES, cells, (c) => c.policy);
  const faults = present<FaultName>(FAULTS, cells, (c) => c.fault);
  const cell = (subset: CellResult[], policy: BenchPolicy) => {
    if (subset.length === 0) return '-';
    const t = totals(subset);
    return `${duplicatesLabel(t.duplicates, t.detectedDuplicates, policy)}/${t.missing}/${t.unresolved}${lateLabel(t)}`;
  };
  const rows = faults.map((fault) => [fault, ...policies.map((policy) => cell(cells.filter((c) => c.fault === fault && c.policy === policy), policy))]);
  rows.push(['all faults', ...policies.map((policy) => cell(cells.filter((c) => c.policy === policy), policy))]);
  return table(['dup/missing/unresolved', ...policies], rows);
}

/**
 * How long agents were left with `unknown`, per fault and policy: the share of intents whose first
 * answer was `unknown` (each such answer is a turn in which a model may decide badly) and the time
 * in unknown, summed over workloads and seeds (`3/12 25% · 840 ms`). Saga cells are not counted.
 */
export function unknownTable(cells: readonly CellResult[]): string {
  const counted = cells.filter((c) => c.firstAnswers > 0);
  const policies = present<BenchPolicy>(ALL_POLICIES, counted, (c) => c.policy);
  const faults = present<FaultName>(FAULTS, counted, (c) => c.fault);
  const cell = (subset: CellResult[]) => {
    if (subset.length === 0) return '-';
    const t = totals(subset);
    return `${t.firstUnknown}/${t.firstAnswers} ${Math.round((100 * t.firstUnknown) / t.firstAnswers)}% · ${t.timeInUnknownMs} ms`;
  };
  const rows = faults.map((fault) => [fault, ...policies.map((policy) => cell(counted.filter((c) => c.fault === fault && c.policy === policy)))]);
  rows.push(['all faults', ...policies.map((policy) => cell(counted.filter((c) => c.policy === policy)))]);
  return table(['first answer unknown · time in unknown', ...policies], rows);
}

/** Every reported measure, per policy. */
export function policyTable(cells: readonly CellResult[]): string {
  const policies = present<BenchPolicy>(ALL_POLICIES, cells, (c) => c.policy);
  const rows = policies.map((policy) => {
    const t = totals(cells.filter((c) => c.policy === policy));
    return [policy, t.cells, t.declared, t.duplicates, t.detectedDuplicates, t.missing, t.falseDedup, t.unresolved, t.escalations, t.timeInUnknownMs, t.wrongReceipt, t.toolCalls, t.p50, t.p99, t.lateInjected, t.lateDetected, t.lateUndetected].map(String);
  });
  return table(['policy', 'cells', 'declared', 'duplicates', 'detected dup', 'missing', 'falseDedup', 'unresolved', 'escalations', 'unknown ms', 'wrongReceipt', 'calls', 'p50 ms', 'p99 ms', 'late', 'late detected', 'lateUndetected'], rows);
}

/**
 * The saga workloads per policy: how the sagas ended (completed / failed and undone / open), and
 * the four "never" checks from the providers' oracles, summed over their cells.
 */
export function sagaTable(cells: readonly CellResult[]): string | undefined {
  const sagas = cells.filter((c) => c.sagaOutcome !== undefined);
  if (sagas.length === 0) return undefined;
  const policies = present<BenchPolicy>(ALL_POLICIES, sagas, (c) => c.policy);
  const rows = policies.map((policy) => {
    const mine = sagas.filter((c) => c.policy === policy);
    const count = (outcome: string) => String(mine.filter((c) => c.sagaOutcome === outcome).length);
    const sum = (pick: (c: CellResult) => number) => String(mine.reduce((s, c) => s + pick(c), 0));
    return [policy, String(mine.length), count('completed'), count('failed'), count('open'), ...SAGA_CHECKS.map((k) => sum((c) => c[k] ?? 0)), sum((c) => c.leftWithHuman ?? 0), sum((c) => c.duplicates), sum((c) => c.missing), sum((c) => c.unresolved)];
  });
  return table(['saga cells', 'cells', 'completed', 'failed', 'open', 'emailWithoutCharge', 'leftInPlace', 'compensatedTwice', 'phantomCompensation', 'leftWithHuman', 'dup', 'missing', 'unresolved'], rows);
}

/**
 * Stripe's two idempotency profiles side by side (issue 13, item 7): the one-charge workload
 * against v1 (`charge`) and v2 (`charge-v2`), per fault, as `v1 → v2` dup/missing/unresolved per
 * policy, and how effectd's charge ended under each (what the agent was told, and effectd's state
 * when it says more: `escalated (terminal_failure)`).
 * Undefined when the run has no fault with cells of both.
 */
export function stripeProfileTable(cells: readonly CellResult[]): string | undefined {
  const of = (profile: 'v1' | 'v2') => cells.filter((c) => c.workload === STRIPE_PROFILE_WORKLOADS[profile]);
  const v1 = of('v1');
  const v2 = of('v2');
  const faults = FAULTS.filter((f) => v1.some((c) => c.fault === f) && v2.some((c) => c.fault === f));
  if (faults.length === 0) return undefined;
  const policies = present<BenchPolicy>(ALL_POLICIES, [...v1, ...v2], (c) => c.policy);
  const score = (subset: CellResult[], policy: BenchPolicy) => {
    if (subset.length === 0) return '-';
    const t = totals(subset);
    return `${duplicatesLabel(t.duplicates, t.detectedDuplicates, policy)}/${t.missing}/${t.unresolved}`;
  };
  const ended = (subset: CellResult[]) => [...new Set(subset.flatMap((c) => (c.error ? ['BROKEN'] : c.intents.map((i) => (i.state && i.state !== i.status ? `${i.status} (${i.state})` : i.status)))))].join(',') || '-';
  const pick = (list: CellResult[], fault: FaultName, policy: BenchPolicy) => list.filter((c) => c.fault === fault && c.policy === policy);
  const rows = faults.map((fault) => [
    fault,
    ...policies.map((policy) => `${score(pick(v1, fault, policy), policy)} → ${score(pick(v2, fault, policy), policy)}`),
    `${ended(pick(v1, fault, 'effectd'))} → ${ended(pick(v2, fault, 'effectd'))}`,
  ]);
  return table(['v1 → v2', ...policies, 'effectd ended'], rows);
}

const workloadLabel = (c: CellResult) => (c.failAt !== undefined ? `${c.workload}@${c.failAt}` : c.workload);

/** One row per cell (for --verbose). */
export function cellTable(cells: readonly CellResult[]): string {
  const rows = cells.map((c) => [workloadLabel(c), c.fault, c.policy, String(c.seed), String(c.declared), String(c.duplicates), String(c.detectedDuplicates), String(c.missing), String(c.falseDedup), String(c.unresolved), String(c.escalations), String(c.timeInUnknownMs), String(c.wrongReceipt), String(c.latencyMs.p50), String(c.latencyMs.p99), String(c.faultInjected), `${c.lateDetected ?? 0}/${c.lateInjected ?? 0}`, c.error ? 'BROKEN' : '']);
  return table(['workload', 'fault', 'policy', 'seed', 'declared', 'dup', 'detected', 'missing', 'falseDedup', 'unresolved', 'escal', 'unknown ms', 'wrongRcpt', 'p50', 'p99', 'injected', 'late det/inj', ''], rows);
}

export function cellLine(c: CellResult): string {
  const name = `${workloadLabel(c)} × ${c.fault} × ${c.policy}${c.seed === 1 ? '' : ` (seed ${c.seed})`}${c.ingress === 'kafka' ? ' [kafka]' : ''}`;
  if (c.error) return `${name}: BROKEN — ${c.error.split('\n')[0]}`;
  const saga = c.sagaOutcome !== undefined ? ` saga ${c.sagaStatus}${SAGA_CHECKS.some((k) => (c[k] ?? 0) > 0) ? ` ${SAGA_CHECKS.map((k) => `${k} ${c[k]}`).join(' ')}` : ''}` : '';
  return `${name.padEnd(60)} dup ${duplicatesLabel(c.duplicates, c.detectedDuplicates, c.policy)} missing ${c.missing} falseDedup ${c.falseDedup} unresolved ${c.unresolved} escalated ${c.escalations} injected ${c.faultInjected}${(c.lateInjected ?? 0) > 0 ? ` late ${c.lateDetected}/${c.lateInjected} detected${c.lateUndetected > 0 ? ` (${c.lateUndetected} UNDETECTED)` : ''}` : ''}${saga} (${(c.elapsedMs / 1000).toFixed(1)} s)`;
}

export function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

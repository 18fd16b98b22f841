import type { CellResult } from '../cell-runner.js';
import { ALL_POLICIES, type BenchPolicy } from '../names.js';
import { caseOf, LIMBO_CASES } from './limbo-cases.js';
import { limboTotals, type LimboTotals } from './limbo-measures.js';

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

const policiesOf = (cells: readonly CellResult[]): BenchPolicy[] => ALL_POLICIES.filter((p) => cells.some((c) => c.policy === p));
const measured = (cells: readonly CellResult[]) => cells.flatMap((c) => (c.limbo && c.error === undefined ? [c.limbo] : []));
const share = (n: number, of: number) => `${n}/${of} (${of === 0 ? 0 : Math.round((100 * n) / of)}%)`;

/** LIMBO's measures per policy, summed over the run's cells. */
export function limboPolicyTotals(cells: readonly CellResult[]): Map<BenchPolicy, LimboTotals> {
  return new Map(policiesOf(cells).map((p) => [p, limboTotals(measured(cells.filter((c) => c.policy === p)))]));
}

/** One row per policy: task success, exactly-once success, duplicates (compensated ones included), collateral writes, overclaim. */
export function limboPolicyTable(cells: readonly CellResult[]): string {
  const rows = [...limboPolicyTotals(cells)].map(([policy, t]) => [policy, String(t.cells), share(t.taskSuccess, t.cells), share(t.exactlyOnce, t.cells), String(t.duplicates), String(t.collateral), String(t.overclaim)]);
  return table(['policy', 'cells', 'task success', 'exactly-once success', 'duplicates', 'collateral', 'overclaim'], rows);
}

/**
 * One row per case, a column per policy: `T E d/c/o`: task success and exactly-once success (+ or -,
 * per cell, seeds side by side), then duplicates / collateral writes / overclaim summed over seeds.
 */
export function limboCaseTable(cells: readonly CellResult[]): string {
  const policies = policiesOf(cells);
  const rows = LIMBO_CASES.filter((k) => cells.some((c) => caseOf(c) === k)).map((k) => [
    `${k.name} (${k.workload})`,
    ...policies.map((p) => {
      const mine = cells.filter((c) => caseOf(c) === k && c.policy === p);
      if (mine.some((c) => c.error !== undefined)) return 'broke';
      const m = measured(mine);
      const flags = (pick: (x: (typeof m)[number]) => boolean) => m.map((x) => (pick(x) ? '+' : '-')).join('');
      const t = limboTotals(m);
      return `${flags((x) => x.taskSuccess)} ${flags((x) => x.exactlyOnce)} ${t.duplicates}/${t.collateral}/${t.overclaim}`;
    }),
  ]);
  return table(['case (workload): T E d/c/o', ...policies], rows);
}

import type { IntentEvidence } from '../scoring.js';

/**
 * LIMBO's measures of one cell, from the providers' oracles and the system's last word per intent:
 * - taskSuccess: the goal is reached in the world (every intended effect exists at its provider);
 * - exactlyOnce: reached with exactly the intended effects (each as many times as intended, and no
 *   collateral write);
 * - duplicates: records beyond the intended ones, compensated ones included (a duplicate refunded
 *   or queued for an operator still happened);
 * - collateral: records at the cell's providers that no intent of the workload names;
 * - overclaim: intents the system reported `done` while the provider shows their effect duplicated
 *   or not done.
 */
export interface LimboMeasures {
  taskSuccess: boolean;
  exactlyOnce: boolean;
  duplicates: number;
  collateral: number;
  overclaim: number;
}

export function limboMeasures(intents: readonly IntentEvidence[], present: (identity: string) => number, collateral: number): LimboMeasures {
  const groups = new Map<string, IntentEvidence[]>();
  for (const intent of intents) groups.set(intent.identity, [...(groups.get(intent.identity) ?? []), intent]);
  let taskSuccess = true;
  let exactlyOnce = collateral === 0;
  let duplicates = 0;
  let overclaim = 0;
  for (const [identity, members] of groups) {
    const allowed = members.reduce((s, i) => s + i.multiplicity, 0);
    const found = present(identity);
    duplicates += Math.max(0, found - allowed);
    if (found < allowed) taskSuccess = false;
    if (found !== allowed) {
      exactlyOnce = false;
      overclaim += members.filter((i) => i.final === 'done').length;
    }
  }
  return { taskSuccess, exactlyOnce: exactlyOnce && taskSuccess, duplicates, collateral, overclaim };
}

/** LIMBO's measures summed over cells (one policy's): successes as counts of cells. */
export interface LimboTotals {
  cells: number;
  taskSuccess: number;
  exactlyOnce: number;
  duplicates: number;
  collateral: number;
  overclaim: number;
}

export function limboTotals(cells: readonly LimboMeasures[]): LimboTotals {
  return {
    cells: cells.length,
    taskSuccess: cells.filter((m) => m.taskSuccess).length,
    exactlyOnce: cells.filter((m) => m.exactlyOnce).length,
    duplicates: cells.reduce((s, m) => s + m.duplicates, 0),
    collateral: cells.reduce((s, m) => s + m.collateral, 0),
    overclaim: cells.reduce((s, m) => s + m.overclaim, 0),
  };
}

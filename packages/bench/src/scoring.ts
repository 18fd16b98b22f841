import type { FinalStatus } from './scripted-agent.js';

/** One intent at the end of a cell: the system's last word on it. */
export interface IntentEvidence {
  intentId: string;
  /** Intents that name the same business identity share the provider's records (a declared repeat and its original). */
  identity: string;
  /** Provider-side records this intent accounts for. */
  multiplicity: number;
  /** A declared, intentional repeat: answering it without doing it is false deduplication. */
  repeat: boolean;
  final: FinalStatus;
  receipt?: string;
}

/** What the providers' oracles hold for one business identity. */
export interface IdentityEvidence {
  present: number;
  /** Every receipt naming one of the present records; 'unchecked' when the provider issues none. */
  knownReceipts: string[] | 'unchecked';
  /**
   * Present records the system itself found to be late arrivals (a request that reached the provider
   * after the settle window, after a proof of absence) and put before an operator with the undo its
   * contract names: reported as late arrivals detected, not as duplicates. 0 for a system that detects nothing.
   */
  lateQueued?: number;
}

export interface CellScore {
  /** Effects the workload intends (the sum of multiplicities). */
  declared: number;
  duplicates: number;
  missing: number;
  falseDedup: number;
  unresolved: number;
  wrongReceipt: number;
}

/** Still open, honestly: unknown, with a human, or waiting on an open step. */
const OPEN: ReadonlySet<FinalStatus> = new Set(['unknown', 'escalated', 'blocked']);

/**
 * Scores the intents of one business identity against the provider's records of it. Records
 * beyond the allowed multiplicity are duplicates. A shortfall goes first to intents the system
 * still calls open (`unresolved`, not a failure), then to declared repeats it answered `done`
 * without doing (`falseDedup`); the rest is `missing` (the system said done or not_done, or lost
 * track). A `done` whose receipt names none of the identity's records is a wrong receipt. Records
 * beyond the multiplicity that the system detected as late arrivals and queued (`lateQueued`) are
 * not duplicates: the cell reports them as late arrivals detected (an undetected one is a duplicate).
 */
export function scoreIdentity(intents: readonly IntentEvidence[], world: IdentityEvidence): CellScore {
  const allowed = intents.reduce((s, i) => s + i.multiplicity, 0);
  const open = intents.filter((i) => OPEN.has(i.final)).reduce((s, i) => s + i.multiplicity, 0);
  let shortfall = Math.max(0, allowed - world.present);
  const excusedByOpen = Math.min(shortfall, open);
  shortfall -= excusedByOpen;
  const repeatsSaidDone = intents.filter((i) => i.repeat && i.final === 'done').reduce((s, i) => s + i.multiplicity, 0);
  const falseDedup = Math.min(shortfall, repeatsSaidDone);
  const known = world.knownReceipts;
  return {
    declared: allowed,
    duplicates: Math.max(0, world.present - allowed - (world.lateQueued ?? 0)),
    missing: shortfall - falseDedup,
    falseDedup,
    unresolved: open,
    wrongReceipt: known === 'unchecked' ? 0 : intents.filter((i) => i.final === 'done' && i.receipt !== undefined && !known.includes(i.receipt)).length,
  };
}

/** Groups a cell's intents by business identity and adds the scores up. */
export function scoreCell(intents: readonly IntentEvidence[], world: (identity: string) => IdentityEvidence): CellScore {
  const groups = new Map<string, IntentEvidence[]>();
  for (const intent of intents) groups.set(intent.identity, [...(groups.get(intent.identity) ?? []), intent]);
  const total: CellScore = { declared: 0, duplicates: 0, missing: 0, falseDedup: 0, unresolved: 0, wrongReceipt: 0 };
  for (const [identity, members] of groups) {
    const score = scoreIdentity(members, world(identity));
    for (const key of Object.keys(total) as (keyof CellScore)[]) total[key] += score[key];
  }
  return total;
}

/** One forward step of a saga at the end of a cell: the system's last word on it, and the provider's records of it. */
export interface SagaStepEvidence {
  final: FinalStatus;
  receipt?: string;
  present: number;
  knownReceipts: string[];
}

/**
 * Scores a saga's forward steps. A saga may end completed (every step once) or failed and undone
 * (each step that ran at most once, undone — the saga checks judge the undoing), so a step's
 * records beyond one are duplicates whatever the ending; a step the system calls done with no
 * record at the provider is missing; a step or compensation still open (unknown, with a human)
 * is unresolved. There are no declared repeats in a saga.
 */
export function scoreSaga(steps: readonly SagaStepEvidence[], compensations: readonly FinalStatus[]): CellScore {
  return {
    declared: steps.length,
    duplicates: steps.reduce((s, step) => s + Math.max(0, step.present - 1), 0),
    missing: steps.filter((step) => step.final === 'done' && step.present === 0).length,
    falseDedup: 0,
    unresolved: steps.filter((step) => OPEN.has(step.final)).length + compensations.filter((c) => OPEN.has(c)).length,
    wrongReceipt: steps.filter((step) => step.final === 'done' && step.receipt !== undefined && step.present > 0 && !step.knownReceipts.includes(step.receipt)).length,
  };
}

/** Nearest-rank percentiles of agent-visible call latencies, in ms (0 when there were none). */
export function latencySummary(samples: readonly number[]): { p50: number; p99: number } {
  if (samples.length === 0) return { p50: 0, p99: 0 };
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = (p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
  const round = (ms: number) => Math.round(ms * 10) / 10;
  return { p50: round(rank(0.5)), p99: round(rank(0.99)) };
}

import type { FinalStatus } from './scripted-agent.js';

/** One intent at the end of a cell: what the provider holds, and what the system last said about it. */
export interface IntentEvidence {
  intentId: string;
  /** Provider-side records the workload allows for this intent. */
  multiplicity: number;
  /** A declared, intentional repeat: missing it is false deduplication. */
  repeat: boolean;
  /** Provider-side records of the intent's business identity (from the oracle). */
  present: number;
  /** The system's last word on the intent. */
  final: FinalStatus;
  receipt?: string;
  /** Every receipt naming one of the present records; 'unchecked' when the provider issues none. */
  knownReceipts: string[] | 'unchecked';
}

export interface IntentScore {
  duplicates: number;
  missing: number;
  falseDedup: number;
  unresolved: number;
  wrongReceipt: number;
}

export interface CellScore extends IntentScore {
  /** Effects the workload intends (the sum of multiplicities). */
  declared: number;
}

/** Still open, honestly: unknown, with a human, or waiting on an open step. */
const OPEN: ReadonlySet<FinalStatus> = new Set(['unknown', 'escalated', 'blocked']);

/**
 * Scores one intent. Extra provider records beyond the multiplicity are duplicates. A shortfall is
 * `unresolved` when the system still says it does not know, `falseDedup` when a declared repeat was
 * answered as done without happening, and `missing` otherwise (the system said done or not_done, or
 * lost track). A `done` whose receipt names none of the provider's records is a wrong receipt.
 */
export function scoreIntent(evidence: IntentEvidence): IntentScore {
  const open = OPEN.has(evidence.final);
  const shortfall = Math.max(0, evidence.multiplicity - evidence.present);
  const falseDedup = !open && evidence.repeat && evidence.final === 'done' ? shortfall : 0;
  return {
    duplicates: Math.max(0, evidence.present - evidence.multiplicity),
    missing: open ? 0 : shortfall - falseDedup,
    falseDedup,
    unresolved: open ? evidence.multiplicity : 0,
    wrongReceipt: evidence.final === 'done' && evidence.receipt !== undefined && evidence.knownReceipts !== 'unchecked' && !evidence.knownReceipts.includes(evidence.receipt) ? 1 : 0,
  };
}

export function scoreCell(evidence: IntentEvidence[]): CellScore {
  const total: CellScore = { declared: 0, duplicates: 0, missing: 0, falseDedup: 0, unresolved: 0, wrongReceipt: 0 };
  for (const item of evidence) {
    const score = scoreIntent(item);
    total.declared += item.multiplicity;
    total.duplicates += score.duplicates;
    total.missing += score.missing;
    total.falseDedup += score.falseDedup;
    total.unresolved += score.unresolved;
    total.wrongReceipt += score.wrongReceipt;
  }
  return total;
}

/** Nearest-rank percentiles of agent-visible call latencies, in ms (0 when there were none). */
export function latencySummary(samples: readonly number[]): { p50: number; p99: number } {
  if (samples.length === 0) return { p50: 0, p99: 0 };
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = (p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
  const round = (ms: number) => Math.round(ms * 10) / 10;
  return { p50: round(rank(0.5)), p99: round(rank(0.99)) };
}

import { describe, expect, it } from 'vitest';
import { latencySummary, scoreCell, scoreIntent, type IntentEvidence } from '../../src/bench/scoring.js';

const evidence = (overrides: Partial<IntentEvidence>): IntentEvidence => ({
  intentId: 'charge', multiplicity: 1, repeat: false, present: 1, final: 'done', receipt: 'ch_1', knownReceipts: ['ch_1'], ...overrides,
});

describe('benchmark scoring (pure)', () => {
  it('one effect, reported done with its receipt, scores zero everywhere', () => {
    expect(scoreIntent(evidence({}))).toEqual({ duplicates: 0, missing: 0, falseDedup: 0, unresolved: 0, wrongReceipt: 0 });
  });

  it('provider-side records beyond the multiplicity are duplicates, whatever the system said', () => {
    expect(scoreIntent(evidence({ present: 3, knownReceipts: ['ch_1', 'ch_2', 'ch_3'] })).duplicates).toBe(2);
    expect(scoreIntent(evidence({ present: 2, final: 'unknown', receipt: undefined })).duplicates).toBe(1);
    expect(scoreIntent(evidence({ multiplicity: 2, present: 3 })).duplicates).toBe(1);
  });

  it('an absent effect the system called done or not_done is missing; called unknown, escalated or blocked it is unresolved', () => {
    expect(scoreIntent(evidence({ present: 0, final: 'not_done', receipt: undefined, knownReceipts: [] }))).toMatchObject({ missing: 1, unresolved: 0 });
    expect(scoreIntent(evidence({ present: 0, final: 'done', knownReceipts: [] }))).toMatchObject({ missing: 1, wrongReceipt: 1 });
    for (const final of ['unknown', 'escalated', 'blocked'] as const) {
      expect(scoreIntent(evidence({ present: 0, final, receipt: undefined, knownReceipts: [] }))).toMatchObject({ missing: 0, unresolved: 1 });
    }
  });

  it('an effect that happened but is still reported unknown is unresolved, not missing and not a duplicate', () => {
    expect(scoreIntent(evidence({ final: 'escalated', receipt: undefined }))).toEqual({ duplicates: 0, missing: 0, falseDedup: 0, unresolved: 1, wrongReceipt: 0 });
  });

  it('a declared repeat answered done without happening is false deduplication, not missing', () => {
    expect(scoreIntent(evidence({ repeat: true, present: 0, knownReceipts: [] }))).toMatchObject({ falseDedup: 1, missing: 0 });
    expect(scoreIntent(evidence({ repeat: true, present: 0, final: 'not_done', receipt: undefined, knownReceipts: [] }))).toMatchObject({ falseDedup: 0, missing: 1 });
    expect(scoreIntent(evidence({ repeat: true, multiplicity: 2, present: 1 }))).toMatchObject({ falseDedup: 1, missing: 0 });
  });

  it('a done receipt that names none of the provider records for the intent is a wrong receipt', () => {
    expect(scoreIntent(evidence({ receipt: 'ch_9', knownReceipts: ['ch_1'] })).wrongReceipt).toBe(1);
    expect(scoreIntent(evidence({ receipt: 'ch_2', present: 2, knownReceipts: ['ch_1', 'ch_2'] })).wrongReceipt).toBe(0);
    expect(scoreIntent(evidence({ receipt: 'ref:eff_1', knownReceipts: 'unchecked' })).wrongReceipt).toBe(0);
    expect(scoreIntent(evidence({ receipt: undefined })).wrongReceipt).toBe(0);
  });

  it('a cell adds its intents up and declares the sum of their multiplicities', () => {
    const cell = scoreCell([
      evidence({ intentId: 'email-1' }),
      evidence({ intentId: 'email-2', present: 2 }),
      evidence({ intentId: 'email-3', present: 0, final: 'unknown', receipt: undefined, knownReceipts: [] }),
      evidence({ intentId: 'email-4', present: 0, final: 'not_done', receipt: undefined, knownReceipts: [] }),
      evidence({ intentId: 'email-5', receipt: 'em_x' }),
    ]);
    expect(cell).toEqual({ declared: 5, duplicates: 1, missing: 1, falseDedup: 0, unresolved: 1, wrongReceipt: 1 });
  });

  it('latency percentiles are nearest-rank over the agent-visible calls', () => {
    expect(latencySummary([])).toEqual({ p50: 0, p99: 0 });
    expect(latencySummary([7])).toEqual({ p50: 7, p99: 7 });
    expect(latencySummary(Array.from({ length: 100 }, (_, i) => 100 - i))).toEqual({ p50: 50, p99: 99 });
  });
});

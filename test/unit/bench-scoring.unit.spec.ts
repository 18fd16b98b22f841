import { describe, expect, it } from 'vitest';
import { FAULTS, undetectedDuplicates } from '../../packages/bench/src/names.js';
import { latencySummary, scoreCell, scoreIdentity, type IdentityEvidence, type IntentEvidence } from '../../packages/bench/src/scoring.js';

const intent = (overrides: Partial<IntentEvidence> = {}): IntentEvidence => ({
  intentId: 'charge', identity: 'INV-1', multiplicity: 1, repeat: false, final: 'done', receipt: 'ch_1', ...overrides,
});
const world = (present: number, knownReceipts: IdentityEvidence['knownReceipts'] = Array.from({ length: present }, (_, i) => `ch_${i + 1}`)): IdentityEvidence => ({ present, knownReceipts });
const zero = { duplicates: 0, missing: 0, falseDedup: 0, unresolved: 0, wrongReceipt: 0 };

describe('benchmark scoring (pure)', () => {
  it('one effect, reported done with its receipt, scores zero everywhere', () => {
    expect(scoreIdentity([intent()], world(1))).toEqual({ declared: 1, ...zero });
  });

  it('provider-side records beyond the multiplicity are duplicates, whatever the system said', () => {
    expect(scoreIdentity([intent()], world(3)).duplicates).toBe(2);
    expect(scoreIdentity([intent({ final: 'unknown', receipt: undefined })], world(2)).duplicates).toBe(1);
    expect(scoreIdentity([intent({ multiplicity: 2 })], world(3)).duplicates).toBe(1);
  });

  it('an absent effect the system called done or not_done is missing; called unknown, escalated or blocked it is unresolved', () => {
    expect(scoreIdentity([intent({ final: 'not_done', receipt: undefined })], world(0))).toMatchObject({ missing: 1, unresolved: 0 });
    expect(scoreIdentity([intent()], world(0))).toMatchObject({ missing: 1, wrongReceipt: 1 });
    for (const final of ['unknown', 'escalated', 'blocked'] as const) {
      expect(scoreIdentity([intent({ final, receipt: undefined })], world(0))).toMatchObject({ missing: 0, unresolved: 1 });
    }
  });

  it('an effect that happened but is still reported unknown is unresolved, not missing and not a duplicate', () => {
    expect(scoreIdentity([intent({ final: 'escalated', receipt: undefined })], world(1))).toEqual({ declared: 1, ...zero, unresolved: 1 });
  });

  it('a declared repeat answered done without happening is false deduplication, not missing', () => {
    const original = intent({ intentId: 'reminder-1' });
    const repeat = intent({ intentId: 'reminder-2', repeat: true, receipt: 'ch_1' });
    expect(scoreIdentity([original, repeat], world(1))).toMatchObject({ declared: 2, falseDedup: 1, missing: 0, duplicates: 0 });
    expect(scoreIdentity([original, repeat], world(2))).toEqual({ declared: 2, ...zero });
    expect(scoreIdentity([original, intent({ intentId: 'reminder-2', repeat: true, final: 'not_done', receipt: undefined })], world(1))).toMatchObject({ falseDedup: 0, missing: 1 });
    expect(scoreIdentity([original, intent({ intentId: 'reminder-2', repeat: true, final: 'unknown', receipt: undefined })], world(1))).toMatchObject({ falseDedup: 0, missing: 0, unresolved: 1 });
    expect(scoreIdentity([original, repeat], world(3)).duplicates).toBe(1);
  });

  it('a done receipt that names none of the provider records for the identity is a wrong receipt', () => {
    expect(scoreIdentity([intent({ receipt: 'ch_9' })], world(1)).wrongReceipt).toBe(1);
    expect(scoreIdentity([intent({ receipt: 'ch_2' })], world(2)).wrongReceipt).toBe(0);
    expect(scoreIdentity([intent({ receipt: 'ref:eff_1' })], world(1, 'unchecked')).wrongReceipt).toBe(0);
    expect(scoreIdentity([intent({ receipt: undefined })], world(1)).wrongReceipt).toBe(0);
  });

  it('a cell scores each business identity against its own records and adds them up', () => {
    const worlds: Record<string, IdentityEvidence> = { a: world(1), b: world(2), c: world(0), d: world(0), e: world(1) };
    const cell = scoreCell([
      intent({ intentId: 'email-1', identity: 'a' }),
      intent({ intentId: 'email-2', identity: 'b' }),
      intent({ intentId: 'email-3', identity: 'c', final: 'unknown', receipt: undefined }),
      intent({ intentId: 'email-4', identity: 'd', final: 'not_done', receipt: undefined }),
      intent({ intentId: 'email-5', identity: 'e', receipt: 'em_x' }),
    ], (id) => worlds[id]!);
    expect(cell).toEqual({ declared: 5, duplicates: 1, missing: 1, falseDedup: 0, unresolved: 1, wrongReceipt: 1 });
  });

  it('extra records the system detected as late arrivals and queued are not duplicates; an undetected one is', () => {
    // late-delivery: the first request landed after the proof of absence, the new step did it again.
    expect(scoreIdentity([intent({ receipt: 'ch_2' })], { ...world(2), lateQueued: 1 })).toEqual({ declared: 1, ...zero });
    expect(scoreIdentity([intent({ receipt: 'ch_2' })], { ...world(2), lateQueued: 0 }).duplicates).toBe(1);
    expect(scoreIdentity([intent({ receipt: 'ch_3' })], { ...world(3), lateQueued: 1 }).duplicates).toBe(1);
    // A late arrival that is the only object (nobody did it again) excuses nothing and is not missing.
    expect(scoreIdentity([intent({ receipt: 'ch_1' })], { ...world(1), lateQueued: 1 })).toEqual({ declared: 1, ...zero });
  });

  it('the gate counts an undetected late arrival like an undetected duplicate (names.ts: undetectedDuplicates)', () => {
    expect(undetectedDuplicates({ fault: 'late-delivery', duplicates: 0, detectedDuplicates: 0, lateUndetected: 0 })).toBe(0);
    expect(undetectedDuplicates({ fault: 'late-delivery', duplicates: 0, detectedDuplicates: 0, lateUndetected: 1 })).toBe(1);
    expect(undetectedDuplicates({ fault: 'late-delivery', duplicates: 1, detectedDuplicates: 0, lateUndetected: 1 })).toBe(2);
    // Unchanged elsewhere: a provider's broken retention excuses only detected duplicates; any other fault none.
    expect(undetectedDuplicates({ fault: 'retention-shorter-than-declared', duplicates: 1, detectedDuplicates: 1 })).toBe(0);
    expect(undetectedDuplicates({ fault: 'after-mutation', duplicates: 1, detectedDuplicates: 1 })).toBe(1);
    expect(FAULTS).toContain('late-delivery');
  });

  it('latency percentiles are nearest-rank over the agent-visible calls', () => {
    expect(latencySummary([])).toEqual({ p50: 0, p99: 0 });
    expect(latencySummary([7])).toEqual({ p50: 7, p99: 7 });
    expect(latencySummary(Array.from({ length: 100 }, (_, i) => 100 - i))).toEqual({ p50: 50, p99: 99 });
  });
});

import { describe, expect, it } from 'vitest';
import type { EffectEvent } from '../../src/core/events.js';
import { foldWorkflow } from '../../src/core/fold.js';
import { decideReconcile, settleFrom, type ReconcilePolicy } from '../../src/core/reconcile-decision.js';
import { declared, finished, started } from '../support/events.js';

const E = 'eff_anchor';
/** A consistent lookup (a journal line): "not found" after the window proves absence. No key. */
const journal: ReconcilePolicy = { lookup: 'name', lookupConsistent: true, dedupesByKey: false, settleWindowMs: 1_000, resends: { max: 0, withinMs: 0 } };
const check = (at: number): EffectEvent => ({ type: 'ReconciliationChecked', v: 1, at, effectId: E, method: 'lookup-by-name', asked: 'search', seen: 'pending', verdict: 'pending' });
const effectOf = (events: EffectEvent[]) => foldWorkflow(events).effects.get(E)!;

describe('the settle window counts from the last moment effectd may have been sending the attempt', () => {
  // Dispatched at t=1000; the timeout gave up waiting at t=1500. A slow provider may have received
  // the request as late as t=1500 and commit up to the window after that.
  const timedOut = [declared(E), started(E, 1, 1_000, { providerKey: null, keyExpiresAt: null }), finished(E, 1, 1_500, 'unknown')];

  it('from the attempt\'s finish: a look at dispatch + window proves nothing yet', () => {
    expect(settleFrom(effectOf(timedOut).attempts[0]!)).toBe(1_500);
    const lookedAtDispatchPlusWindow = effectOf([...timedOut, check(1_510), check(2_000)]);
    expect(decideReconcile(lookedAtDispatchPlusWindow, 2_001, journal).kind).not.toBe('not-committed');
    const lookedAfterFinishPlusWindow = effectOf([...timedOut, check(1_510), check(2_500)]);
    expect(decideReconcile(lookedAfterFinishPlusWindow, 2_501, journal)).toMatchObject({ kind: 'not-committed' });
  });

  it('for a claim whose instance died (no finish), from the end of its lease', () => {
    const orphan = effectOf([declared(E), started(E, 1, 1_000, { providerKey: null, keyExpiresAt: null, leaseUntil: 8_000 })]);
    expect(settleFrom(orphan.attempts[0]!)).toBe(8_000);
    const looked = effectOf([declared(E), started(E, 1, 1_000, { providerKey: null, keyExpiresAt: null, leaseUntil: 8_000 }), check(8_100), check(8_500)]);
    expect(decideReconcile(looked, 8_600, journal).kind).not.toBe('not-committed');
  });
});

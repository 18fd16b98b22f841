import { describe, expect, it } from 'vitest';
import type { EffectEvent } from '../../src/core/events.js';
import { foldWorkflow } from '../../src/core/fold.js';
import { settleFrom, type ReconcilePolicy } from '../../src/core/reconcile-schedule.js';
import { reconcileStep as decideReconcile } from '../support/decide.js';
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
    expect(decideReconcile(lookedAtDispatchPlusWindow, 2_001, journal).kind).not.toBe('prove-not-committed');
    const lookedAfterFinishPlusWindow = effectOf([...timedOut, check(1_510), check(2_500)]);
    expect(decideReconcile(lookedAfterFinishPlusWindow, 2_501, journal)).toMatchObject({ kind: 'prove-not-committed' });
  });

  it('for a claim whose instance died (no finish), from the end of its lease', () => {
    const orphan = effectOf([declared(E), started(E, 1, 1_000, { providerKey: null, keyExpiresAt: null, leaseUntil: 8_000 })]);
    expect(settleFrom(orphan.attempts[0]!)).toBe(8_000);
    const looked = effectOf([declared(E), started(E, 1, 1_000, { providerKey: null, keyExpiresAt: null, leaseUntil: 8_000 }), check(8_100), check(8_500)]);
    expect(decideReconcile(looked, 8_600, journal).kind).not.toBe('prove-not-committed');
  });
});

describe('only a lookup the provider answered, asked after the window, is the last look', () => {
  const timedOut = [declared(E), started(E, 1, 1_000, { providerKey: null, keyExpiresAt: null }), finished(E, 1, 1_500, 'unknown')];
  const unanswered = (at: number): EffectEvent => ({ type: 'ReconciliationChecked', v: 1, at, askedAt: at - 1, effectId: E, method: 'lookup-by-name', asked: 'search', seen: 'timeout after 1000 ms', verdict: 'unanswered' });

  it('looks that went unanswered after the window prove nothing: asked again with backoff, then a human', () => {
    const looks = [check(1_510), unanswered(2_600)];
    expect(decideReconcile(effectOf([...timedOut, ...looks]), 2_601, journal)).toMatchObject({ kind: 'wait' });
    expect(decideReconcile(effectOf([...timedOut, ...looks]), 2_900, journal)).toMatchObject({ kind: 'lookup' });
    const five = [check(1_510), unanswered(2_600), unanswered(2_900), unanswered(3_500), unanswered(4_600), unanswered(6_700)];
    const step = decideReconcile(effectOf([...timedOut, ...five]), 6_701, journal);
    expect(step).toMatchObject({ kind: 'escalate' });
    expect(step.kind === 'escalate' && step.reason).toMatch(/did not answer/);
    // One answered look after them is the proof.
    expect(decideReconcile(effectOf([...timedOut, ...five, check(7_000)]), 7_001, journal)).toMatchObject({ kind: 'prove-not-committed' });
  });

  it('while the key still protects, an unanswered lookup leads to the same-key resend, never to a proof of absence', () => {
    const keyed: ReconcilePolicy = { ...journal, dedupesByKey: true, resends: { max: 1, withinMs: 60_000 } };
    const withKey = [declared(E), started(E, 1, 1_000, { providerKey: 'efd-k', keyExpiresAt: 90_000 }), finished(E, 1, 1_500, 'unknown')];
    const five = [2_600, 2_900, 3_500, 4_600, 6_700].map(unanswered);
    expect(decideReconcile(effectOf([...withKey, check(1_510), ...five]), 6_701, keyed)).toMatchObject({ kind: 'resend' });
  });

  it('a look is placed by when it was asked: asked inside the window, answered after it, it is not the last look', () => {
    const slowAnswer: EffectEvent = { type: 'ReconciliationChecked', v: 1, at: 2_700, askedAt: 2_300, effectId: E, method: 'lookup-by-name', asked: 'search', seen: '0 matches', verdict: 'pending' };
    expect(decideReconcile(effectOf([...timedOut, check(1_510), slowAnswer]), 2_701, journal)).toMatchObject({ kind: 'lookup' });
    const askedAfter: EffectEvent = { ...slowAnswer, askedAt: 2_500, at: 2_900 };
    expect(decideReconcile(effectOf([...timedOut, check(1_510), askedAfter]), 2_901, journal)).toMatchObject({ kind: 'prove-not-committed' });
  });
});

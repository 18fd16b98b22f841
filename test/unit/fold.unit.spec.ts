import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { effectStatus } from '../../src/core/effect-state.js';
import { SETTLED_STATUSES as SETTLED } from '../../src/core/effect-lifecycle.js';
import { isEffectdError } from '../../src/core/errors.js';
import type { EffectEvent as LedgerEvent } from '../../src/core/events.js';
import { evolveEffect, foldWorkflow, type WorkflowState } from '../../src/core/fold.js';
import { resubmitStep } from '../support/decide.js';
import { declared, finished, started } from '../support/events.js';

const E = 'eff_1';

/** A random action; `toEvent` turns it into an event for the history so far (it may be illegal). */
const action = fc.oneof(
  fc.record({ kind: fc.constant('start' as const), sameKey: fc.boolean(), dt: fc.integer({ min: 0, max: 10_000 }) }),
  fc.record({ kind: fc.constant('finish' as const), outcome: fc.constantFrom('committed', 'failed_before_effect', 'terminal_failure', 'unknown') as fc.Arbitrary<'committed' | 'failed_before_effect' | 'terminal_failure' | 'unknown'>, back: fc.nat(2), dt: fc.integer({ min: 0, max: 10_000 }) }),
  fc.record({ kind: fc.constant('check' as const), verdict: fc.constantFrom('committed', 'not_committed', 'pending') as fc.Arbitrary<'committed' | 'not_committed' | 'pending'>, dt: fc.integer({ min: 0, max: 10_000 }) }),
  fc.record({ kind: fc.constant('escalate' as const), dt: fc.integer({ min: 0, max: 10_000 }) }),
  fc.record({ kind: fc.constant('resolve' as const), committed: fc.boolean(), dt: fc.integer({ min: 0, max: 10_000 }) }),
);
type Action = typeof action extends fc.Arbitrary<infer A> ? A : never;

function toEvent(history: LedgerEvent[], a: Action): LedgerEvent {
  const at = history[history.length - 1]!.at + a.dt;
  const attempts = history.filter((e) => e.type === 'AttemptStarted').length;
  switch (a.kind) {
    case 'start':
      return started(E, attempts + 1, at, { providerKey: a.sameKey ? 'efd-key-1' : `efd-key-${attempts + 1}`, leaseUntil: at + 3_000, keyExpiresAt: at + 20_000 });
    case 'finish':
      return finished(E, Math.max(1, attempts - a.back), at, a.outcome, a.outcome === 'committed' ? 'ch_1' : undefined);
    case 'check':
      return { type: 'ReconciliationChecked', v: 1, at, effectId: E, method: 'lookup-by-reference', asked: 'search', seen: a.verdict, verdict: a.verdict, ...(a.verdict === 'committed' ? { receipt: 'ch_1' } : {}) };
    case 'escalate':
      return { type: 'EffectEscalated', v: 1, at, effectId: E, reason: 'no lookup', evidence: 'none' };
    case 'resolve':
      return { type: 'EffectResolved', v: 1, at, effectId: E, resolvedBy: 'op', outcome: a.committed ? 'committed' : 'failed_before_effect', reason: 'checked by hand', ...(a.committed ? { receipt: 'ch_2' } : {}) };
  }
}

/** Builds a legal history from random actions, keeping only events the fold accepts. */
function legalHistory(actions: Action[]): LedgerEvent[] {
  const history: LedgerEvent[] = [declared(E)];
  let state = foldWorkflow(history);
  for (const a of actions) {
    const event = toEvent(history, a);
    try {
      evolveEffect(state.effects.get(E), event);
    } catch (error) {
      if (isEffectdError(error, 'illegal_transition')) continue;
      throw error;
    }
    history.push(event);
    state = foldWorkflow(history);
  }
  return history;
}

/** A state as plain data: what it holds, whatever layers its maps are made of. */
function plain(state: WorkflowState) {
  return { ...state, effects: [...state.effects], decisions: [...state.decisions], byContent: [...state.byContent], byTarget: [...state.byTarget] };
}

describe('the fold', () => {
  it('property: replaying any prefix is deterministic, and folding on from a prefix equals folding the whole', () => {
    fc.assert(fc.property(fc.array(action, { maxLength: 25 }), fc.nat(), (actions, cut) => {
      const history = legalHistory(actions);
      const k = cut % (history.length + 1);
      const prefix = history.slice(0, k);
      expect(plain(foldWorkflow(prefix))).toEqual(plain(foldWorkflow(structuredClone(prefix))));
      expect(plain(foldWorkflow(history.slice(k), foldWorkflow(prefix)))).toEqual(plain(foldWorkflow(history)));
    }), { numRuns: 300 });
  });

  it('property: no sequence of events takes a settled effect back to dispatchable', () => {
    fc.assert(fc.property(fc.array(action, { maxLength: 30 }), fc.array(action, { maxLength: 30 }), (before, after) => {
      const history = legalHistory(before);
      const settledAt = history.findIndex((_, i) => SETTLED.has(foldWorkflow(history.slice(0, i + 1)).effects.get(E)!.recordedStatus));
      const all = legalHistory([...before, ...after]);
      const firstSettled = all.findIndex((_, i) => SETTLED.has(foldWorkflow(all.slice(0, i + 1)).effects.get(E)!.recordedStatus));
      fc.pre(firstSettled >= 0 || settledAt >= 0);
      for (let i = firstSettled; i < all.length; i++) {
        const effect = foldWorkflow(all.slice(0, i + 1)).effects.get(E)!;
        for (const now of [effect.lastEventAt, effect.lastEventAt + 1e9]) {
          expect(['declared', 'dispatching', 'unknown']).not.toContain(effectStatus(effect, now));
          expect(['claim', 'resend', 'lookup', 'hold']).not.toContain(resubmitStep(effect, now, { lookup: 'reference', lookupConsistent: false, dedupesByKey: true, settleWindowMs: 1_000, resends: { max: 3, withinMs: 1e12 } }).kind);
        }
      }
    }), { numRuns: 300 });
  });

  it('property: an expired lease folds to unknown, never to declared', () => {
    fc.assert(fc.property(fc.array(action, { maxLength: 25 }), fc.integer({ min: 0, max: 1e7 }), (actions, extra) => {
      const history = legalHistory(actions);
      const effect = foldWorkflow(history).effects.get(E)!;
      fc.pre(effect.recordedStatus === 'dispatching');
      const lease = effect.attempts[effect.attempts.length - 1]!.started.leaseUntil;
      expect(effectStatus(effect, lease - 1)).toBe('dispatching');
      expect(effectStatus(effect, lease + extra)).toBe('unknown');
    }), { numRuns: 500 });
  });

  it('rejects illegal transitions with a typed error', () => {
    const base = [declared(E), started(E, 1, 1_100)];
    expect(() => foldWorkflow([...base, started(E, 2, 1_200)])).toThrow(/AttemptStarted is accepted only when the effect is declared, unknown/);
    // An unknown effect is never re-sent with another key, nor after its key expired.
    const lost = [...base, finished(E, 1, 1_200, 'unknown')];
    expect(() => foldWorkflow([...lost, started(E, 2, 1_300, { providerKey: 'efd-other' })])).toThrow(/new key/);
    expect(() => foldWorkflow([...lost, started(E, 2, 1_100 + 86_400_001)])).toThrow(/expired/);
    expect(() => foldWorkflow([declared(E), declared(E)])).toThrow(/already declared/);
    try {
      foldWorkflow([...base, finished(E, 1, 1_200, 'committed', 'ch_1'), started(E, 2, 1_300)]);
      expect.unreachable();
    } catch (error) {
      expect(isEffectdError(error, 'illegal_transition')).toBe(true);
    }
  });

  it('nothing a resend hears proves an ambiguous first attempt did nothing, unless the provider replays its stored answer to it', () => {
    const lost = [declared(E), started(E, 1, 1_100), finished(E, 1, 1_200, 'unknown'), started(E, 2, 1_300)];
    const stateAfter = (answer: (typeof lost)[number]) => foldWorkflow([...lost, answer]).effects.get(E)!.recordedStatus;
    expect(stateAfter(finished(E, 2, 1_400, 'failed_before_effect'))).toBe('unknown'); // never left
    // Stripe's 400 idempotency_error ("same parameters") is evidence the key WAS used, not proof of absence.
    expect(stateAfter({ ...finished(E, 2, 1_400, 'failed_before_effect'), httpStatus: 400 } as (typeof lost)[number])).toBe('unknown');
    expect(stateAfter({ ...finished(E, 2, 1_400, 'failed_before_effect'), httpStatus: 402 } as (typeof lost)[number])).toBe('unknown');
    // The stored answer to the first request, replayed under its key: the first attempt was refused.
    expect(stateAfter({ ...finished(E, 2, 1_400, 'failed_before_effect'), httpStatus: 402, replayed: true } as (typeof lost)[number])).toBe('failed_before_effect');
  });
});

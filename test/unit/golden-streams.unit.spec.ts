import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { effectStatus } from '../../src/core/effect-state.js';
import { ledgerEvent } from '../../src/core/events.js';
import { foldWorkflow } from '../../src/core/fold.js';
import { compensationStepKey } from '../../src/core/saga/saga-definition.js';
import { decideSaga } from '../../src/core/saga/saga-decision.js';
import { tripBooking } from '../../sagas/trip-booking.saga.js';

/**
 * Streams recorded from real runs of an earlier version, committed under test/golden/. The current
 * schemas must still read them, the fold must still fold them, and the decisions must not change.
 */
const golden = (name: string) => (JSON.parse(readFileSync(`test/golden/${name}.v1.json`, 'utf8')) as unknown[]).map((e) => ledgerEvent.parse(e));
const FAR = Date.parse('2100-01-01');

describe('golden workflow streams', () => {
  it('a trip whose card was declined: compensated in reverse order, and the saga has nothing left to do', () => {
    const events = golden('trip-booking-compensated');
    const state = foldWorkflow(events);
    expect(state.saga?.finished?.outcome).toBe('compensated');
    const byStep = new Map([...state.effects.values()].map((e) => [e.declared.step, effectStatus(e, FAR)]));
    expect(Object.fromEntries(byStep)).toEqual({
      'hold-flight': 'committed', 'book-hotel': 'committed', 'charge-card': 'failed_before_effect',
      [compensationStepKey('book-hotel')]: 'committed', [compensationStepKey('hold-flight')]: 'committed',
    });
    const stepOfEffect = new Map([...state.effects.values()].map((e) => [e.effectId, e.declared.step]));
    const compensationOrder = events.filter((e) => e.type === 'EffectDeclared' && e.step.startsWith('compensate:')).map((e) => (e as { step: string }).step);
    expect(compensationOrder).toEqual([compensationStepKey('book-hotel'), compensationStepKey('hold-flight')]);
    const idFor = (key: string) => [...stepOfEffect].find(([, step]) => step === key)?.[0] ?? `missing:${key}`;
    expect(decideSaga(tripBooking, state.saga!.started.input, state, FAR, idFor)).toEqual({ kind: 'finished' });
  });

  it('a lost reply reconciled by lookup, with the model\'s re-decision held against it', () => {
    const state = foldWorkflow(golden('lost-reply-reconciled-and-held'));
    expect(state.decisions.get('1')).toMatchObject({ tool: 'payments.charge' });
    const [first, second] = [...state.effects.values()];
    expect(effectStatus(first!, FAR)).toBe('committed');
    expect(first!.checks.at(-1)?.verdict).toBe('committed');
    expect(first!.attempts).toHaveLength(1);
    expect(effectStatus(second!, FAR)).toBe('held');
    expect(second!.heldBy?.effectId).toBe(first!.effectId);
    expect(second!.attempts).toHaveLength(0);
  });

  it('an escalation resolved by an operator', () => {
    const [effect] = [...foldWorkflow(golden('escalated-then-resolved')).effects.values()];
    expect(effectStatus(effect!, FAR)).toBe('committed');
    expect(effect!.resolvedBy).toBe('default-operator');
    expect(effect!.receipt).toBe('msg-7');
  });
});

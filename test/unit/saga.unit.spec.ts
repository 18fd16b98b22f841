import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { EffectEvent } from '../../src/core/events.js';
import { foldWorkflow } from '../../src/core/fold.js';
import { compensationStepKey, defineSaga, validateSaga, type SagaDefinition, type SagaStepDefinition } from '../../src/core/saga/saga-definition.js';
import { compensationRetryDelayMs, decideSaga, DEFAULT_COMPENSATION_RETRY } from '../../src/core/saga/saga-decision.js';
import { tripBooking } from '../../sagas/trip-booking.saga.js';
import { declared, finished, started } from '../support/events.js';

const undo = { name: 'undo', tool: 'x.undo', reversibility: 'idempotent' as const, args: (r: string) => ({ id: r }) };
const step = (name: string, reversibility: SagaStepDefinition<unknown>['reversibility'], extra: Partial<SagaStepDefinition<unknown>> = {}): SagaStepDefinition<unknown> => ({ name, tool: `x.${name}`, reversibility, args: () => ({}), ...extra });
const saga = (...steps: SagaStepDefinition<unknown>[]): SagaDefinition<unknown> => ({ name: 'test', version: 1, description: '', input: z.unknown(), steps });
const contracts: Record<string, 'read' | 'idempotent' | 'compensable' | 'irreversible'> = { 'x.a': 'compensable', 'x.b': 'compensable', 'x.send': 'irreversible', 'x.undo': 'idempotent', 'x.refund': 'irreversible' };

describe('saga validation at registration', () => {
  it('rejects a compensable step without a compensation, saying what to add', () => {
    expect(() => defineSaga(saga(step('a', 'compensable')))).toThrow(/step "a" is compensable but declares no compensation: add one \(see compensations\/\)/);
  });
  it('rejects an irreversible step placed before a compensable step that could still fail', () => {
    expect(() => defineSaga(saga(step('a', 'compensable', { compensation: undo }), step('send', 'irreversible'), step('b', 'compensable', { compensation: undo }))))
      .toThrow(/step "send" is irreversible but compensable step\(s\) "b" come after it .* move them before "send"/);
  });
  it('rejects a compensation that is itself irreversible without saying so', () => {
    const refund = { name: 'refund', tool: 'x.refund', reversibility: 'idempotent' as const, args: (r: string) => ({ id: r }) };
    expect(() => validateSaga(saga(step('a', 'compensable', { compensation: refund })), (t) => contracts[t])).toThrow(/compensation "refund" of step "a" is irreversible \(x.refund's contract says so\) but does not say so: set reversibility: 'irreversible' and irreversibleBecause/);
    expect(() => validateSaga(saga(step('a', 'compensable', { compensation: { ...refund, reversibility: 'irreversible', irreversibleBecause: 'money returned' } })), (t) => contracts[t])).not.toThrow();
  });
  it('rejects unknown tools, contracts that contradict the step, and duplicate names', () => {
    expect(() => validateSaga(saga(step('zzz', 'read')), (t) => contracts[t])).toThrow(/uses tool x.zzz, which is not configured/);
    expect(() => validateSaga(saga(step('send', 'compensable', { compensation: undo })), (t) => contracts[t])).toThrow(/declared compensable, but tool x.send's contract says irreversible/);
    expect(() => defineSaga(saga(step('a', 'read'), step('a', 'read')))).toThrow(/declared twice/);
  });
  it('accepts the shipped trip-booking saga', () => {
    expect(tripBooking.steps.map((s) => s.name)).toEqual(['hold-flight', 'book-hotel', 'charge-card', 'email-itinerary']);
  });
});

describe('saga decisions (pure)', () => {
  const def = saga(step('a', 'compensable', { compensation: undo }), step('b', 'compensable', { compensation: undo }), step('c', 'compensable', { compensation: undo }), step('send', 'irreversible'));
  const id = (key: string) => `eff_${key}`;
  const sagaStarted = { type: 'SagaStarted' as const, v: 1 as const, at: 1, saga: 'test', version: 1, tenant: 't', workflowId: 'w', input: {}, startedBy: 'me' };
  const committed = (key: string, at: number): EffectEvent[] => [declared(id(key), at, { step: key }), started(id(key), 1, at), finished(id(key), 1, at + 1, 'committed', `r-${key}`)];
  const failed = (key: string, at: number): EffectEvent[] => [declared(id(key), at, { step: key }), started(id(key), 1, at), finished(id(key), 1, at + 1, 'failed_before_effect')];
  const lost = (key: string, at: number): EffectEvent[] => [declared(id(key), at, { step: key }), started(id(key), 1, at), finished(id(key), 1, at + 1, 'unknown')];

  it('runs steps in order, the irreversible one only after every compensable one committed', () => {
    expect(decideSaga(def, {}, foldWorkflow([sagaStarted]), 10, id)).toMatchObject({ kind: 'run-step', stepKey: 'a' });
    expect(decideSaga(def, {}, foldWorkflow([sagaStarted, ...committed('a', 2), ...committed('b', 5)]), 10, id)).toMatchObject({ kind: 'run-step', stepKey: 'c' });
    expect(decideSaga(def, {}, foldWorkflow([sagaStarted, ...committed('a', 2), ...committed('b', 5), ...committed('c', 8)]), 10, id)).toMatchObject({ kind: 'run-step', stepKey: 'send' });
  });

  it('an unknown step pauses the saga: nothing is compensated on a guess', () => {
    const decision = decideSaga(def, {}, foldWorkflow([sagaStarted, ...committed('a', 2), ...lost('b', 5)]), 10, id);
    expect(decision).toMatchObject({ kind: 'wait', stepKey: 'b' });
  });

  it('a proven failure compensates committed steps in reverse order, and never a step that did not happen', () => {
    const history = [sagaStarted, ...committed('a', 2), ...committed('b', 5), ...failed('c', 8)];
    expect(decideSaga(def, {}, foldWorkflow(history), 10, id)).toMatchObject({ kind: 'begin-compensation', failedStep: 'c' });
    const compensating = [...history, { type: 'SagaCompensating' as const, v: 1 as const, at: 11, failedStep: 'c', reason: 'declined' }];
    expect(decideSaga(def, {}, foldWorkflow(compensating), 12, id)).toMatchObject({ kind: 'compensate', stepKey: compensationStepKey('b'), args: { id: 'r-b' } });
    const bUndone = [...compensating, ...committed(compensationStepKey('b'), 13)];
    expect(decideSaga(def, {}, foldWorkflow(bUndone), 20, id)).toMatchObject({ kind: 'compensate', stepKey: compensationStepKey('a'), args: { id: 'r-a' } });
    const allUndone = [...bUndone, ...committed(compensationStepKey('a'), 16)];
    expect(decideSaga(def, {}, foldWorkflow(allUndone), 20, id)).toMatchObject({ kind: 'finish', outcome: 'compensated' });
  });

  it('a compensation that failed for sure does not stop the others: the rest are undone, then a human is asked', () => {
    const compensating = [sagaStarted, ...committed('a', 2), ...committed('b', 5), ...failed('c', 8), { type: 'SagaCompensating' as const, v: 1 as const, at: 9, failedStep: 'c', reason: 'declined' }];
    const bUndoFailed = [...compensating, ...failed(compensationStepKey('b'), 10)];
    expect(decideSaga(def, {}, foldWorkflow(bUndoFailed), 20, id)).toMatchObject({ kind: 'compensate', stepKey: compensationStepKey('a') });
    const aUndone = [...bUndoFailed, ...committed(compensationStepKey('a'), 12)];
    expect(decideSaga(def, {}, foldWorkflow(aUndone), 20, id)).toMatchObject({ kind: 'finish', outcome: 'compensation_failed', reason: expect.stringMatching(/compensation .* of b failed.*a human must undo the rest/) });
  });

  it('a compensation never sent (connection refused) is sent again as a new slot after a backoff; a refusal is not', () => {
    const slotId = (key: string, slot = 0) => (slot ? `eff_${key}#${slot}` : `eff_${key}`);
    const undoA = compensationStepKey('a');
    const neverSent = (slot: number, at: number): EffectEvent[] => [
      declared(slotId(undoA, slot), at, { step: undoA, slot: String(slot) }), started(slotId(undoA, slot), 1, at),
      { ...finished(slotId(undoA, slot), 1, at + 1, 'failed_before_effect'), neverSent: true, reason: 'never sent: ECONNREFUSED' } as EffectEvent,
    ];
    const compensating = [sagaStarted, ...committed('a', 2), ...failed('b', 5), { type: 'SagaCompensating' as const, v: 1 as const, at: 6, failedStep: 'b', reason: 'x' }];
    const once = [...compensating, ...neverSent(0, 10)];
    const retryAt = 11 + compensationRetryDelayMs(0);
    expect(decideSaga(def, {}, foldWorkflow(once), retryAt - 1, slotId)).toMatchObject({ kind: 'wait', stepKey: undoA, retryAt, why: expect.stringMatching(/never sent \(never sent: ECONNREFUSED\); try 2 of 8/) });
    expect(decideSaga(def, {}, foldWorkflow(once), retryAt, slotId)).toMatchObject({ kind: 'compensate', stepKey: undoA, slot: 1, args: { id: 'r-a' } });
    const retried = [declared(slotId(undoA, 1), retryAt, { step: undoA, slot: '1' }), started(slotId(undoA, 1), 1, retryAt), finished(slotId(undoA, 1), 1, retryAt + 1, 'committed', 're-a')];
    expect(decideSaga(def, {}, foldWorkflow([...once, ...retried]), retryAt + 5, slotId)).toMatchObject({ kind: 'finish', outcome: 'compensated' });

    // Every try refused the connection: after the last one a human is asked, with the count.
    const all = [...compensating, ...Array.from({ length: DEFAULT_COMPENSATION_RETRY.attempts }, (_, slot) => neverSent(slot, 100_000 * (slot + 1))).flat()];
    expect(decideSaga(def, {}, foldWorkflow(all), 10_000_000, slotId)).toMatchObject({ kind: 'finish', outcome: 'compensation_failed', reason: expect.stringMatching(/failed \(8 tries\): never sent/) });

    // A provider that answered "no" (HTTP 4xx) is not asked again.
    const refused = [...compensating, ...failed(undoA, 10)];
    expect(decideSaga(def, {}, foldWorkflow(refused), 1_000_000, slotId)).toMatchObject({ kind: 'finish', outcome: 'compensation_failed' });
  });

  it('a compensation left unknown pauses the compensating saga', () => {
    const history = [sagaStarted, ...committed('a', 2), ...failed('b', 5), { type: 'SagaCompensating' as const, v: 1 as const, at: 6, failedStep: 'b', reason: 'x' }, ...lost(compensationStepKey('a'), 7)];
    expect(decideSaga(def, {}, foldWorkflow(history), 10, id)).toMatchObject({ kind: 'wait', stepKey: compensationStepKey('a') });
  });
});

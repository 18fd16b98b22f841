import { IllegalTransitionError } from './errors.js';
import { PersistentMap } from './persistent-map.js';
import { acceptsEvent, statusesAccepting } from './effect-lifecycle.js';
import { currentAttempt, effectStatus, type EffectState } from './effect-state.js';
import type { SagaState } from './saga/saga-events.js';
import { isEffectEvent, type DecisionRecorded, type EffectEvent, type LedgerEvent, type WorkflowEvent } from './events.js';

export interface WorkflowState {
  effects: PersistentMap<string, EffectState>;
  /** The model's journaled decisions, by step. */
  decisions: PersistentMap<string, DecisionRecorded>;
  /** Effect ids by content key, in declaration order (the workflow's content index). */
  byContent: PersistentMap<string, readonly string[]>;
  /** Effect ids by tool + target (`targetKeyOf`), in declaration order. */
  byTarget: PersistentMap<string, readonly string[]>;
  /** The saga this workflow runs, if any. */
  saga?: SagaState;
  /** Stream revision of the last folded event; -1 for an empty stream. */
  revision: number;
}

export const emptyWorkflow: WorkflowState = { effects: PersistentMap.empty(), decisions: PersistentMap.empty(), byContent: PersistentMap.empty(), byTarget: PersistentMap.empty(), revision: -1 };

/** The target index's key: what one effect acts on, per tool. */
export function targetKeyOf(tool: string, target: string): string {
  return `${tool}\n${target}`;
}

/**
 * The pure fold of a workflow stream. Throws IllegalTransitionError on an event the rules forbid.
 * `initial` is never changed: what a fold adds is a new layer over it, so folding a few events
 * onto a long workflow costs what the events touch.
 */
export function foldWorkflow(events: readonly LedgerEvent[], initial: WorkflowState = emptyWorkflow): WorkflowState {
  if (events.length === 0) return initial;
  const effects = new Map<string, EffectState>();
  const decisions = new Map<string, DecisionRecorded>();
  const byContent = new Map<string, readonly string[]>();
  const byTarget = new Map<string, readonly string[]>();
  const decided = (step: string) => decisions.has(step) || initial.decisions.has(step);
  let saga = initial.saga;
  for (const event of events) {
    if (isEffectEvent(event)) {
      effects.set(event.effectId, evolveEffect(effects.get(event.effectId) ?? initial.effects.get(event.effectId), event));
      if (event.type === 'EffectDeclared') {
        if (event.contentKey) byContent.set(event.contentKey, [...(byContent.get(event.contentKey) ?? initial.byContent.get(event.contentKey) ?? []), event.effectId]);
        const target = targetKeyOf(event.tool, event.target);
        byTarget.set(target, [...(byTarget.get(target) ?? initial.byTarget.get(target) ?? []), event.effectId]);
      }
    } else saga = evolveWorkflow(decided, decisions, saga, event);
  }
  return {
    effects: initial.effects.with(effects),
    decisions: initial.decisions.with(decisions),
    byContent: initial.byContent.with(byContent),
    byTarget: initial.byTarget.with(byTarget),
    revision: initial.revision + events.length,
    ...(saga ? { saga } : {}),
  };
}

function evolveWorkflow(decided: (step: string) => boolean, decisions: Map<string, DecisionRecorded>, saga: SagaState | undefined, event: WorkflowEvent): SagaState | undefined {
  const reject = (from: string, why: string): never => {
    throw new IllegalTransitionError('workflow', from, event.type, why);
  };
  switch (event.type) {
    case 'DecisionRecorded':
      if (decided(event.step)) throw new IllegalTransitionError(`step ${event.step}`, 'decided', event.type, 'a step is decided once; replay the recorded decision');
      decisions.set(event.step, event);
      return saga;
    case 'SagaStarted':
      if (saga) reject('saga started', 'a workflow runs one saga; starting it again is answered from the ledger');
      return { started: event };
    case 'SagaCompensating':
      if (!saga || saga.finished || saga.compensating) reject(saga ? 'saga compensating or finished' : 'no saga', 'compensation begins once, in a running saga');
      return { ...saga!, compensating: event };
    case 'SagaFinished':
      if (!saga || saga.finished) reject(saga ? 'saga finished' : 'no saga', 'a saga finishes once');
      if (event.outcome === 'completed' && saga!.compensating) reject('saga compensating', 'a compensating saga cannot complete');
      return { ...saga!, finished: event };
  }
}

/**
 * Applies one event to one effect. The lifecycle table (effect-lifecycle.ts) says which events a
 * status accepts at all; each case below then checks what is particular to that event.
 */
export function evolveEffect(effect: EffectState | undefined, event: EffectEvent): EffectState {
  if (event.type === 'EffectDeclared') {
    if (effect) throw new IllegalTransitionError(event.effectId, effect.recordedStatus, event.type, 'already declared');
    return { effectId: event.effectId, declared: event, recordedStatus: 'declared', attempts: [], checks: [], lastEventAt: event.at, log: [event] };
  }
  if (!effect) throw new IllegalTransitionError(event.effectId, 'none', event.type, 'effect was never declared');
  // Transitions are judged at the event's own time, so replay never depends on the reader's clock.
  const from = effectStatus(effect, event.at);
  const reject = (why: string): never => {
    throw new IllegalTransitionError(event.effectId, from, event.type, why);
  };
  if (!acceptsEvent(from, event.type)) reject(`${event.type} is accepted only when the effect is ${statusesAccepting(event.type).join(', ') || 'new'}`);
  const next: EffectState = { ...effect, lastEventAt: event.at, log: [...effect.log, event] };

  switch (event.type) {
    case 'EffectHeld': {
      if (effect.attempts.length > 0) reject('only a new, never dispatched effect is held');
      next.recordedStatus = 'held';
      next.heldBy = { effectId: event.matchedEffectId, step: event.matchedStep, scope: event.scope, basis: event.basis ?? 'content', ...(event.matchedWorkflowId ? { workflowId: event.matchedWorkflowId } : {}) };
      return next;
    }
    case 'EffectReleased': {
      next.recordedStatus = 'declared';
      next.heldBy = undefined;
      next.releasedBy = event.releasedBy;
      return next;
    }
    case 'EffectWithdrawn': {
      // The table admits it only while declared or held; a claim, even a lost one, may have sent it.
      if (effect.attempts.length > 0) reject('an effect that was claimed may have been sent: the world cannot be cancelled');
      next.withdrawnBy = event.withdrawnBy;
      return settle(next, 'failed_before_effect', event.at, undefined, `withdrawn by ${event.withdrawnBy} before anything was sent: ${event.reason}`);
    }
    case 'AttemptStarted': {
      const previous = currentAttempt(effect);
      if (event.attempt !== effect.attempts.length + 1) reject(`attempt ${event.attempt} out of order`);
      if (from === 'unknown') {
        // Retrying an unknown effect is only safe with the very key the provider already saw,
        // while the provider still remembers it.
        if (!previous || previous.started.providerKey === null) reject('no provider key to retry with');
        if (previous!.started.providerKey !== event.providerKey) reject('an unknown effect is never re-sent with a new key');
        if (previous!.started.keyExpiresAt === null || event.at >= previous!.started.keyExpiresAt) reject('the provider key has expired');
      }
      next.recordedStatus = 'dispatching';
      next.attempts = [...effect.attempts, { started: event }];
      if (from === 'unknown' && next.unknownSince === undefined) next.unknownSince = previous!.started.leaseUntil;
      return next;
    }
    case 'AttemptFinished': {
      const index = event.attempt - 1;
      const attempt = effect.attempts[index];
      if (!attempt) reject(`attempt ${event.attempt} was never started`);
      if (attempt!.finished) reject(`attempt ${event.attempt} already finished`);
      next.attempts = effect.attempts.map((a, i) => (i === index ? Object.assign({}, a, { finished: event }) : a));
      const isCurrent = index === effect.attempts.length - 1;
      if (event.outcome === 'committed') return settle(next, 'committed', event.at, event.receipt, event.reason);
      // An older attempt's non-committed result says nothing about the newer attempt in flight.
      if (!isCurrent) return next;
      if (event.outcome === 'unknown') {
        next.recordedStatus = 'unknown';
        next.unknownSince ??= event.at;
        next.reason = event.reason;
        return next;
      }
      if (event.outcome === 'failed_before_effect' && !event.replayed && effect.attempts.some((a, i) => i < index && a.finished?.outcome !== 'failed_before_effect')) {
        // What a resend hears proves nothing about an earlier, ambiguous attempt, unless the provider
        // says it is the stored answer to that attempt (replayed): one that never left says nothing,
        // and a fresh refusal may itself be evidence the key WAS used (Stripe's 400 idempotency_error
        // for other parameters under a used key). It stays unknown: lookup, then a human.
        next.recordedStatus = 'unknown';
        next.reason = `a resend under the same key was refused (${event.reason}); that does not prove the first attempt did not happen`;
        return next;
      }
      return settle(next, event.outcome, event.at, undefined, event.reason);
    }
    case 'ReconciliationChecked': {
      // A poisoned key (terminal_failure) stops resends, not lookups: a lookup is a safe read.
      if (from === 'terminal_failure' && event.verdict === 'not_committed') reject('a stored failure may hide a commit: only a human proves it absent');
      next.checks = [...effect.checks, event];
      next.unknownSince ??= currentAttempt(effect)?.started.leaseUntil ?? event.at;
      if (event.verdict === 'committed') return settle(next, 'committed', event.at, event.receipt, `found at the provider: ${event.seen}`);
      if (event.verdict === 'not_committed') return settle(next, 'failed_before_effect', event.at, undefined, `proven absent: ${event.seen}`);
      next.recordedStatus = from;
      return next;
    }
    case 'EffectEscalated': {
      next.recordedStatus = 'escalated';
      next.unknownSince ??= currentAttempt(effect)?.started.leaseUntil ?? event.at;
      next.reason = event.reason;
      return next;
    }
    case 'DuplicateDetected':
    case 'ResendAudited': {
      if (effect.audit) reject('a committed effect is audited for duplicates once');
      next.audit = event.type === 'DuplicateDetected' ? { verdict: 'duplicates', at: event.at, receipts: event.receipts, handled: {} } : { verdict: event.verdict, at: event.at };
      return next;
    }
    case 'AbsenceAudited': {
      if (effect.absenceAudit) reject('a proof of absence is audited once');
      next.absenceAudit = { verdict: event.verdict, at: event.at };
      return next;
    }
    case 'LateArrivalDetected': {
      if (effect.absenceAudit) reject('a proof of absence is audited once');
      next.absenceAudit = { verdict: 'confirmed', at: event.at };
      next.lateArrival = { at: event.at, receipt: event.receipt, provenAbsentAt: event.provenAbsentAt };
      return settle(next, 'committed', event.at, event.receipt, `it arrived at the provider after effectd had proven it absent: ${event.seen}`);
    }
    case 'DuplicateHandled': {
      const late = effect.lateArrival;
      if (late && event.receipt === late.receipt) {
        if (late.handled) reject('each extra object is handled once');
        next.lateArrival = { ...late, handled: { action: event.action, by: event.handledBy, reason: event.reason, ...(event.compensationEffectId ? { compensationEffectId: event.compensationEffectId } : {}) } };
        return next;
      }
      const audit = effect.audit;
      if (audit?.verdict !== 'duplicates' || !audit.receipts.includes(event.receipt) || event.receipt === effect.receipt) reject('only an extra object of a detected duplicate is handled');
      if ((audit as Extract<typeof audit, { verdict: 'duplicates' }>).handled[event.receipt]) reject('each extra object is handled once');
      const duplicates = audit as Extract<typeof audit, { verdict: 'duplicates' }>;
      next.audit = { ...duplicates, handled: { ...duplicates.handled, [event.receipt]: { action: event.action, by: event.handledBy, reason: event.reason, ...(event.compensationEffectId ? { compensationEffectId: event.compensationEffectId } : {}) } } };
      return next;
    }
    case 'EffectResolved': {
      next.resolvedBy = event.resolvedBy;
      return settle(next, event.outcome, event.at, event.receipt, event.reason);
    }
  }
}

/**
 * Object.assign, not a spread: on Node 20 a spread that adds members its source lacks (here
 * settledAt, receipt, reason; `finished` above) costs microseconds per object, ~10x an assign, and
 * every effect settles in each fold of its outcome. Same members, same order.
 */
function settle(effect: EffectState, status: 'committed' | 'failed_before_effect' | 'terminal_failure', at: number, receipt: string | undefined, reason: string): EffectState {
  return Object.assign({}, effect, { recordedStatus: status, settledAt: at, receipt: receipt ?? effect.receipt, reason });
}

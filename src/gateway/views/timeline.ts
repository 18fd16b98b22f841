import type { LedgerEvent } from '../../core/events.js';

/** One line a person can read, per ledger event (CLI, demo, console). Exhaustive over event types. */
export function describeEvent(event: LedgerEvent): string {
  switch (event.type) {
    case 'EffectDeclared':
      return `declared ${event.tool} for ${event.target} (step ${event.step}, slot ${event.slot}) by ${event.principal}${event.onBehalfOf ? ` (on behalf of ${event.onBehalfOf}, as the command claimed)` : ''}${event.repeat ? `, declared repeat: ${event.repeat.reason}` : ''}`;
    case 'AttemptStarted':
      return `attempt ${event.attempt} claimed by ${event.instanceId}, key ${event.providerKey ?? '(none)'}, lease until ${new Date(event.leaseUntil).toISOString()}`;
    case 'AttemptFinished':
      return `attempt ${event.attempt} → ${event.outcome}${event.receipt ? ` (receipt ${event.receipt})` : ''}: ${event.reason} [${event.latencyMs.toFixed(1)} ms]`;
    case 'ReconciliationChecked':
      return `checked ${event.method}: asked ${event.asked}, saw ${event.seen} → ${event.verdict}${event.receipt ? ` (receipt ${event.receipt})` : ''}`;
    case 'EffectEscalated':
      return `escalated to a human: ${event.reason}`;
    case 'EffectHeld':
      return `held: ${event.basis === 'target' ? 'the same target as' : 'the same content as'} step ${event.matchedStep} (${event.matchedEffectId}, ${event.scope}); nothing sent`;
    case 'EffectReleased':
      return `released by ${event.releasedBy}: ${event.reason}`;
    case 'SagaStarted':
      return `saga ${event.saga} v${event.version} started by ${event.startedBy}`;
    case 'SagaCompensating':
      return `saga compensating: step ${event.failedStep} failed (${event.reason}); undoing committed steps in reverse order`;
    case 'SagaFinished':
      return `saga ${event.outcome}: ${event.reason}`;
    case 'DecisionRecorded':
      return `decision for step ${event.step}: ${event.tool} ${JSON.stringify(event.args)}${event.decidedBy ? ` (decided by ${event.decidedBy})` : ''}${event.recordedBy ? `, journaled by ${event.recordedBy}` : ''}`;
    case 'DuplicateDetected':
      return `DUPLICATE at the provider: ${event.receipts.length} objects carry this effect's reference (${event.receipts.join(', ')}); asked ${event.asked}`;
    case 'ResendAudited':
      return `audited after the resend: ${event.verdict === 'single' ? 'one object at the provider' : 'could not check'} (asked ${event.asked}, saw ${event.seen})`;
    case 'DuplicateHandled':
      return `duplicate ${event.receipt} ${event.action} by ${event.handledBy}${event.compensationEffectId ? ` (undo ${event.compensationEffectId})` : ''}: ${event.reason}`;
    case 'AbsenceAudited':
      return `proof of absence looked up once more: ${event.verdict === 'confirmed' ? 'still not there' : 'the lookup did not answer'} (asked ${event.asked}, saw ${event.seen})`;
    case 'LateArrivalDetected':
      return `LATE ARRIVAL: found at the provider after it was proven absent (receipt ${event.receipt}; asked ${event.asked}, saw ${event.seen}); it happened, and the agent was told not_done`;
    case 'EffectResolved':
      return `resolved by ${event.resolvedBy} as ${event.outcome}${event.receipt ? ` (receipt ${event.receipt})` : ''}: ${event.reason}`;
  }
}

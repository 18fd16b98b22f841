import type { LedgerEvent } from '../../core/events.js';
import type { Principal } from '../caller.js';

/**
 * Events as a caller may see them: an operator sees them as recorded; an agent's credential sees
 * every provider key of the workflow abridged (`efd-AbCd…`) wherever it appears (the attempt's
 * `providerKey`, a request body that carries it, a text of an older ledger): the key is the
 * operator's reconciliation handle, never the agent's (issue 27).
 */
export function eventsFor<T extends { event: LedgerEvent }>(caller: Pick<Principal, 'role'>, records: readonly T[]): T[] {
  if (caller.role === 'operator') return [...records];
  const keys = new Set<string>();
  for (const { event } of records) if (event.type === 'AttemptStarted' && event.providerKey) keys.add(event.providerKey);
  if (keys.size === 0) return [...records];
  return records.map((record) => {
    let json = JSON.stringify(record.event);
    for (const key of keys) if (json.includes(key)) json = json.split(key).join(`${key.slice(0, 8)}…`);
    return Object.assign({}, record, { event: JSON.parse(json) as LedgerEvent });
  });
}

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
    case 'EffectWithdrawn':
      return `withdrawn by ${event.withdrawnBy} before anything was sent: ${event.reason}`;
    case 'SagaStarted':
      return `saga ${event.saga} v${event.version} started by ${event.startedBy}`;
    case 'SagaCompensating':
      return `saga compensating: step ${event.failedStep} failed (${event.reason}); undoing committed steps in reverse order`;
    case 'SagaFinished':
      return `saga ${event.outcome}: ${event.reason}`;
    case 'DecisionRecorded':
      return `decision for step ${event.step}: ${event.tool} ${JSON.stringify(event.args)}${event.decidedBy ? ` (decided by ${event.decidedBy}, as claimed by the caller)` : ''}${event.recordedBy ? `, journaled by ${event.recordedBy}` : ''}`;
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

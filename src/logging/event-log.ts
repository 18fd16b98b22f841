import type { EffectState } from '../core/effect-state.js';
import type { EffectEvent, LedgerEvent, WorkflowEvent } from '../core/events.js';
import type { WorkflowState } from '../core/fold.js';
import type { Logger } from './logger.js';

export type EventLogLevel = 'debug' | 'info' | 'warn' | 'error';

/** One log record for one appended ledger event: its level, a sentence, and the ids an operator greps for. */
export interface EventLogRecord {
  level: EventLogLevel;
  msg: string;
  fields: Record<string, string | number | boolean | string[] | undefined>;
}

/**
 * The log's view of the ledger: each appended event becomes at most one record, with the effect's
 * (or saga's) effectId / workflowId / tenant / tool / actor. Fields are picked one by one, never
 * copied: no provider key, request body or lookup URL reaches a record, and a provider key quoted
 * in a free-text reason (a provider's error body) is blanked.
 */
export function eventLogRecords(stream: string, events: readonly LedgerEvent[], after: WorkflowState, enabled: (level: EventLogLevel) => boolean = () => true): EventLogRecord[] {
  const records: EventLogRecord[] = [];
  for (const event of events) {
    let record: EventLogRecord | undefined;
    if (!('effectId' in event)) record = workflowRecord(event, workflowOfStream(stream), after);
    else {
      const effect = after.effects.get(event.effectId);
      // Every effect event follows its declaration in the same stream, so the state after the append holds it.
      record = effect ? effectRecord(event, effect, enabled) : { level: 'debug', msg: `${event.type} of an effect the workflow's state does not hold`, fields: { event: event.type, effectId: event.effectId, ...workflowOfStream(stream) } };
    }
    if (record && enabled(record.level)) records.push(record);
  }
  return records;
}

/** Subscribes a logger to the workflow store's appends; a logging failure never fails the append it describes. */
export function logAppendedEvents(logger: Logger): (stream: string, events: readonly LedgerEvent[], after: WorkflowState) => void {
  return (stream, events, after) => {
    try {
      // Records below the logger's level are not even built: on the append path, most are debug.
      for (const record of eventLogRecords(stream, events, after, (level) => logger.isLevelEnabled(level))) logger[record.level](record.fields, record.msg);
    } catch (error) {
      logger.error({ stream, err: { message: (error as Error).message } }, 'could not log appended ledger events');
    }
  };
}

/** Undefined when `enabled` refuses the record's level (nothing of it is built then: the message and fields are thunks). */
function effectRecord(event: EffectEvent, effect: EffectState, enabled: (level: EventLogLevel) => boolean): EventLogRecord | undefined {
  const { tool, target, step, tenant, workflowId } = effect.declared;
  let scrubber: ((text: string) => string) | undefined;
  const scrub = (text: string) => (scrubber ??= keyScrubber(effect))(text);
  const about = `${tool} for ${target}`;
  // Object.assign, not spread: spreading these small objects measured ~10x slower on Node 20, on the append path.
  const record = (level: EventLogLevel, msg: () => string, fields: () => EventLogRecord['fields'] = () => ({})): EventLogRecord | undefined =>
    enabled(level) ? { level, msg: msg(), fields: Object.assign({ event: event.type, effectId: event.effectId, workflowId, tenant, tool, step }, fields()) } : undefined;
  switch (event.type) {
    case 'EffectDeclared':
      return record('debug', () => `declared: ${about}`, () => ({ actor: event.principal, onBehalfOf: event.onBehalfOf, repeat: event.repeat ? true : undefined }));
    case 'AttemptStarted':
      return record('debug', () => `attempt ${event.attempt} started: ${about}`, () => ({ attempt: event.attempt, instanceId: event.instanceId }));
    case 'AttemptFinished': {
      const fields = () => ({ attempt: event.attempt, outcome: event.outcome, receipt: event.receipt, httpStatus: event.httpStatus, replayed: event.replayed, reason: scrub(event.reason) });
      if (event.outcome === 'terminal_failure') return record('warn', () => `terminal failure: ${about}: ${scrub(event.reason)}`, fields);
      if (event.outcome === 'unknown') return record('info', () => `outcome unknown, reconciling: ${about}: ${scrub(event.reason)}`, fields);
      if (event.outcome === 'failed_before_effect') return record('info', () => `not done: ${about}: ${scrub(event.reason)}`, fields);
      return record('debug', () => `committed: ${about} (receipt ${event.receipt ?? 'none'})`, fields);
    }
    case 'ReconciliationChecked':
      return record('info', () => `reconciliation check (${event.method}): ${event.verdict}${event.receipt ? ` (receipt ${event.receipt})` : ''}: ${about}`, () => ({ method: event.method, verdict: event.verdict, receipt: event.receipt }));
    case 'EffectEscalated':
      return record('warn', () => `escalated to a human: ${about}: ${scrub(event.reason)}`, () => ({ reason: scrub(event.reason) }));
    case 'EffectResolved':
      return record('info', () => `resolved by ${event.resolvedBy} as ${event.outcome}: ${about}: ${event.reason}`, () => ({ actor: event.resolvedBy, outcome: event.outcome, receipt: event.receipt, reason: event.reason }));
    case 'EffectHeld':
      return record('info', () => `held as a duplicate intent of effect ${event.matchedEffectId} (step ${event.matchedStep}, ${event.scope} ${event.basis ?? 'content'}): ${about}`, () => ({ matchedEffectId: event.matchedEffectId, matchedWorkflowId: event.matchedWorkflowId, scope: event.scope }));
    case 'EffectReleased':
      return record('info', () => `released by ${event.releasedBy}: ${about}: ${event.reason}`, () => ({ actor: event.releasedBy, reason: event.reason }));
    case 'EffectWithdrawn':
      return record('info', () => `withdrawn by ${event.withdrawnBy} before anything was sent: ${about}: ${event.reason}`, () => ({ actor: event.withdrawnBy, reason: event.reason }));
    case 'DuplicateDetected':
      return record('error', () => `DUPLICATE at the provider: ${about} exists ${event.receipts.length} times: ${event.receipts.join(', ')}; an operator decides (console, or POST /v1/effects/${event.effectId}/duplicates/<receipt>)`, () => ({ receipts: event.receipts }));
    case 'ResendAudited':
      return record('info', () => `resend audited: ${event.verdict}: ${about}`, () => ({ verdict: event.verdict }));
    case 'AbsenceAudited':
      return record('info', () => `proof of absence audited: ${event.verdict}: ${about}`, () => ({ verdict: event.verdict }));
    case 'LateArrivalDetected':
      return record('error', () => `LATE ARRIVAL: ${about} happened after effectd had proven it absent (receipt ${event.receipt}); the agent was told not_done and may have done it again; an operator decides (console, or POST /v1/effects/${event.effectId}/duplicates/${event.receipt})`, () => ({ receipt: event.receipt, provenAbsentAt: new Date(event.provenAbsentAt).toISOString() }));
    case 'DuplicateHandled':
      return record('info', () => `duplicate ${event.receipt} ${event.action} by ${event.handledBy}: ${about}: ${event.reason}`, () => ({ actor: event.handledBy, receipt: event.receipt, action: event.action, compensationEffectId: event.compensationEffectId, reason: event.reason }));
  }
}

function workflowRecord(event: WorkflowEvent, workflow: { tenant?: string; workflowId?: string }, after: WorkflowState): EventLogRecord {
  const started = after.saga?.started;
  const ids = { event: event.type, workflowId: started?.workflowId ?? workflow.workflowId, tenant: started?.tenant ?? workflow.tenant };
  const saga = started?.saga ?? 'unknown saga';
  switch (event.type) {
    case 'DecisionRecorded':
      return { level: 'debug', msg: `decision recorded for step ${event.step}: ${event.tool}`, fields: Object.assign({}, ids, { step: event.step, tool: event.tool, actor: event.recordedBy }) };
    case 'SagaStarted':
      return { level: 'info', msg: `saga ${event.saga} v${event.version} started by ${event.startedBy}`, fields: Object.assign({}, ids, { saga: event.saga, actor: event.startedBy }) };
    case 'SagaCompensating':
      return { level: 'warn', msg: `saga ${saga} compensating: step ${event.failedStep} failed: ${event.reason}`, fields: Object.assign({}, ids, { saga, failedStep: event.failedStep, reason: event.reason }) };
    case 'SagaFinished':
      return { level: event.outcome === 'compensation_failed' ? 'error' : 'info', msg: `saga ${saga} ended: ${event.outcome} (${event.reason})`, fields: Object.assign({}, ids, { saga, state: event.outcome, reason: event.reason }) };
  }
}

/** Blanks the effect's own provider keys wherever a free-text field quotes them. */
function keyScrubber(effect: EffectState): (text: string) => string {
  const keys = effect.attempts.map((a) => a.started.providerKey).filter((k): k is string => typeof k === 'string' && k.length >= 8);
  return (text) => keys.reduce((out, key) => out.split(key).join('[provider key]'), text);
}

/** `workflow-<tenant>/<workflowId>` (src/core/streams.ts), both URI-encoded. */
function workflowOfStream(stream: string): { tenant?: string; workflowId?: string } {
  const match = /^workflow-([^/]*)\/(.*)$/.exec(stream);
  if (!match) return {};
  try {
    return { tenant: decodeURIComponent(match[1]!), workflowId: decodeURIComponent(match[2]!) };
  } catch {
    return {};
  }
}

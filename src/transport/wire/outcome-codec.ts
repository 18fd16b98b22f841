import type { CommandRefusal } from './refusal.js';
import { create, toJsonString } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import type { AgentOutcome, AgentStatus as CoreStatus } from '../../core/agent-outcome.js';
import type { CommandEnvelope } from './command-codec.js';
import { AgentStatus, EffectOutcomeSchema } from './effectd/v1/effectd_pb.js';
import { refusalMessage } from './refusal.js';
import { outcomeJson, type OutcomeFields } from './outcome-json.js';

const TO_WIRE: Record<CoreStatus, AgentStatus> = { done: AgentStatus.DONE, not_done: AgentStatus.NOT_DONE, unknown: AgentStatus.UNKNOWN };

export interface OutcomeAddress extends CommandEnvelope {
  step?: string;
  slot?: string;
}

/**
 * The shell's answer as an effectd.v1.EffectOutcome in proto3 JSON. Every Kafka answer goes through
 * here, so it is written directly (outcome-json.ts) rather than through protobuf-es's reflective
 * writer (21–33 µs per answer on the bench's Kafka lane); the reflective writer stays for what the
 * direct one does not take (a time or a number out of the mapping's range) and is the test's oracle.
 */
export function encodeOutcome(outcome: AgentOutcome, address: OutcomeAddress): string {
  const expect = outcome.expectAnswerBy ? Date.parse(outcome.expectAnswerBy) : NaN;
  const fields: OutcomeFields = {
    ...addressFields(address),
    effectId: outcome.effectId,
    status: TO_WIRE[outcome.status],
    state: outcome.state,
    tool: outcome.tool,
    target: outcome.target,
    receipt: outcome.receipt ?? '',
    reason: outcome.reason ?? '',
    message: outcome.message,
    reference: outcome.reference ?? '',
    checking: outcome.checking ?? '',
    ...(Number.isFinite(expect) ? { expectAnswerByMs: expect } : {}),
    replayed: outcome.replayed,
    ...(outcome.waitedMs !== undefined ? { waitedMs: outcome.waitedMs } : {}),
  };
  return outcomeJson(fields) ?? reflectiveOutcomeJson(fields);
}

/** The same fields through protobuf-es (create + toJsonString). */
export function reflectiveOutcomeJson({ expectAnswerByMs, ...fields }: OutcomeFields): string {
  return toJsonString(EffectOutcomeSchema, create(EffectOutcomeSchema, { ...fields, ...(expectAnswerByMs !== undefined ? { expectAnswerBy: timestampFromMs(expectAnswerByMs) } : {}) }));
}

export type { CommandRefusal } from './refusal.js';

/**
 * The answer to a command that was refused before it was acted on (a changed intent on a declared
 * step, a command that does not validate, an unknown tool, a forbidden tenant). Status REFUSED: not
 * an outcome of the effect. Nothing was done for THIS command; for a conflict, `error.recorded`
 * says where the recorded effect stands (only a recorded not_done lets a changed intent go as a new
 * step), and the message quotes it.
 */
export function encodeRefusal(refusal: CommandRefusal, address: OutcomeAddress): string {
  const { recorded } = refusal;
  return toJsonString(EffectOutcomeSchema, create(EffectOutcomeSchema, {
    ...addressFields(address),
    effectId: refusal.effectId ?? '',
    status: AgentStatus.REFUSED,
    reason: refusal.code,
    message: refusalMessage(refusal.code, refusal.message),
    error: {
      code: refusal.code, message: refusal.message, fields: refusal.fields ?? [],
      ...(recorded ? { recorded: { status: TO_WIRE[recorded.status], state: recorded.state, receipt: recorded.receipt ?? '', message: recorded.message } } : {}),
    },
  }));
}

export { decodeOutcome } from './outcome-decoder.js';
export { refusalMessage } from './refusal.js';

function addressFields(address: OutcomeAddress) {
  return {
    correlationId: address.correlationId ?? '',
    tenant: address.tenant ?? '',
    workflowId: address.workflowId ?? '',
    step: address.step ?? '',
    slot: address.slot ?? '',
    ...(address.trace ? { trace: address.trace } : {}),
  };
}

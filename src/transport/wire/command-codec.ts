import { fromJsonString } from '@bufbuild/protobuf';
import type { EffectCommandInput } from '../../core/effect-command.js';
import { EffectCommandSchema, type EffectCommand as WireCommand, type TraceContext } from './effectd/v1/effectd_pb.js';

/** What the transport keeps of a command to answer it: where, under which key, matched by what. */
export interface CommandEnvelope {
  workflowId?: string;
  tenant?: string;
  correlationId?: string;
  replyTopic?: string;
  trace?: { traceparent?: string; tracestate?: string };
}

export type DecodedCommand =
  /** `waitMs`: the command's answer budget after a lost reply (absent: the tool's default). */
  | { ok: true; command: EffectCommandInput; envelope: CommandEnvelope; waitMs?: number }
  | { ok: false; detail: string; envelope: CommandEnvelope };

/**
 * Reads a Kafka message value: UTF-8 JSON in the proto3 canonical JSON mapping of
 * effectd.v1.EffectCommand (unknown fields are refused, as the mapping says). Proto3's empty
 * defaults become "absent", so the shell's zod schema reports missing fields by name.
 */
export function decodeCommand(value: Buffer | null): DecodedCommand {
  if (value === null || value.length === 0) return { ok: false, detail: 'the message has no value (expected an effectd.v1.EffectCommand as JSON)', envelope: {} };
  const text = value.toString('utf8');
  let wire: WireCommand;
  try {
    wire = fromJsonString(EffectCommandSchema, text);
  } catch (error) {
    return { ok: false, detail: `not an effectd.v1.EffectCommand in proto3 JSON: ${(error as Error).message}`, envelope: looseEnvelope(text) };
  }
  return { ok: true, command: toCommandInput(wire), envelope: envelopeOf(wire), ...(wire.waitMs !== undefined ? { waitMs: wire.waitMs } : {}) };
}

function toCommandInput(wire: WireCommand): EffectCommandInput {
  const step = wire.position.case === 'step' ? wire.position.value : wire.position.case === 'stepIndex' ? wire.position.value : undefined;
  const approval = wire.approval && {
    ...(wire.approval.approvalId ? { approvalId: wire.approval.approvalId } : {}),
    ...(wire.approval.approvedBy ? { approvedBy: wire.approval.approvedBy } : {}),
    ...(wire.approval.policyGeneration ? { policyGeneration: wire.approval.policyGeneration } : {}),
  };
  const saga = wire.saga && {
    sagaId: wire.saga.sagaId,
    ...(wire.saga.saga ? { saga: wire.saga.saga } : {}),
    ...(wire.saga.sagaStep ? { sagaStep: wire.saga.sagaStep } : {}),
  };
  // Absent fields stay absent (not undefined-valued keys) so zod's defaults and messages apply.
  const input: Record<string, unknown> = {
    ...(wire.tenant ? { tenant: wire.tenant } : {}),
    ...(wire.workflowId ? { workflowId: wire.workflowId } : {}),
    ...(step !== undefined ? { step } : {}),
    ...(wire.slot ? { slot: wire.slot } : {}),
    ...(wire.tool ? { tool: wire.tool } : {}),
    ...(wire.args ? { args: wire.args } : {}),
    ...(wire.principal ? { principal: wire.principal } : {}),
    ...(wire.repeat ? { repeat: { reason: wire.repeat.reason } } : {}),
    ...(wire.correlationId ? { correlationId: wire.correlationId } : {}),
    ...(approval ? { approval } : {}),
    ...(saga ? { saga } : {}),
    ...(wire.replyTopic ? { replyTopic: wire.replyTopic } : {}),
    ...(wire.trace ? { trace: traceOf(wire.trace) } : {}),
  };
  return input as EffectCommandInput;
}

function envelopeOf(wire: WireCommand): CommandEnvelope {
  return {
    ...(wire.workflowId ? { workflowId: wire.workflowId } : {}),
    ...(wire.tenant ? { tenant: wire.tenant } : {}),
    ...(wire.correlationId ? { correlationId: wire.correlationId } : {}),
    ...(wire.replyTopic ? { replyTopic: wire.replyTopic } : {}),
    ...(wire.trace ? { trace: traceOf(wire.trace) } : {}),
  };
}

function traceOf(trace: TraceContext): { traceparent?: string; tracestate?: string } {
  return { ...(trace.traceparent ? { traceparent: trace.traceparent } : {}), ...(trace.tracestate ? { tracestate: trace.tracestate } : {}) };
}

/** Best effort for a message the schema refused: enough to tell its sender, if it named itself. */
function looseEnvelope(text: string): CommandEnvelope {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return {};
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {};
  const field = (camel: string, snake: string): string | undefined => {
    const value = (parsed as Record<string, unknown>)[camel] ?? (parsed as Record<string, unknown>)[snake];
    return typeof value === 'string' && value.length > 0 && value.length <= 256 ? value : undefined;
  };
  const workflowId = field('workflowId', 'workflow_id');
  const tenant = field('tenant', 'tenant');
  const correlationId = field('correlationId', 'correlation_id');
  const replyTopic = field('replyTopic', 'reply_topic');
  return { ...(workflowId ? { workflowId } : {}), ...(tenant ? { tenant } : {}), ...(correlationId ? { correlationId } : {}), ...(replyTopic ? { replyTopic } : {}) };
}

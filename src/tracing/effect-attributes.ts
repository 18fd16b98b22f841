import type { Attributes } from '@opentelemetry/api';
import type { AgentOutcome } from '../core/agent-outcome.js';
import type { EffectAddress } from '../core/identity.js';
import { ATTR } from './span-names.js';
import { SpanKind } from './tracer.js';

/**
 * The attributes of effectd's spans, built from ids, names and verdicts only (span-names.ts): the
 * one place that decides what a span may say about an effect. Never arguments, keys or requests.
 */

/** HTTP and MCP calls are served; a Kafka command is consumed; the CLI acts in-process. */
export function commandSpanKind(ingress: string): SpanKind {
  return ingress === 'kafka' ? SpanKind.CONSUMER : ingress === 'cli' ? SpanKind.INTERNAL : SpanKind.SERVER;
}

export function commandAttributes(submitted: { outcome: AgentOutcome; disposition: string; address: EffectAddress }): Attributes {
  const { outcome, disposition, address } = submitted;
  return {
    [ATTR.tool]: outcome.tool, [ATTR.tenant]: address.tenant, [ATTR.workflowId]: address.workflowId, [ATTR.step]: address.step, [ATTR.slot]: address.slot,
    ...(outcome.effectId ? { [ATTR.effectId]: outcome.effectId } : {}),
    [ATTR.outcome]: outcome.status, [ATTR.state]: outcome.state, [ATTR.disposition]: disposition,
  };
}

/** A saga started through its own route: the saga's workflow and where it stands. */
export function sagaCommandAttributes(view: { saga: string; tenant: string; workflowId: string; status: string }): Attributes {
  return { [ATTR.tool]: `saga:${view.saga}`, [ATTR.saga]: view.saga, [ATTR.tenant]: view.tenant, [ATTR.workflowId]: view.workflowId, [ATTR.state]: view.status };
}

export function effectAttributes(effectId: string, tool: string): Attributes {
  return { [ATTR.effectId]: effectId, [ATTR.tool]: tool };
}

export function attemptAttributes(effectId: string, tool: string, attempt: number): Attributes {
  return { [ATTR.effectId]: effectId, [ATTR.tool]: tool, [ATTR.attempt]: attempt };
}

export function classificationAttributes(classification: { outcome: string; replayed: boolean }): Attributes {
  return { [ATTR.classification]: classification.outcome, [ATTR.replayed]: classification.replayed };
}

/** A check at the provider (`lookup-by-key`, `lookup-by-reference`, `lookup-by-name`, `audit`) or of the settle window (`settle-window`), and what it found. */
export function checkAttributes(effectId: string, tool: string, mode: string, kind: string, verdict: string): Attributes {
  return { [ATTR.effectId]: effectId, [ATTR.tool]: tool, [ATTR.checkMode]: mode, [ATTR.checkKind]: kind, [ATTR.checkVerdict]: verdict };
}

export function sagaStepAttributes(step: { saga: string; tenant: string; workflowId: string; stepKey: string; tool: string; phase: 'run' | 'compensate' }): Attributes {
  return { [ATTR.saga]: step.saga, [ATTR.tenant]: step.tenant, [ATTR.workflowId]: step.workflowId, [ATTR.step]: step.stepKey, [ATTR.tool]: step.tool, [ATTR.sagaPhase]: step.phase };
}

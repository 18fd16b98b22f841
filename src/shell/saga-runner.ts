import { canonicalJson } from '../core/canonical-json.js';
import { effectStatus } from '../core/effect-state.js';
import { EffectdError, invalidCommand } from '../core/errors.js';
import type { WorkflowState } from '../core/fold.js';
import { deriveEffectId } from '../core/identity.js';
import { compensationStepKey, type SagaDefinition } from '../core/saga/saga-definition.js';
import { decideSaga, DEFAULT_COMPENSATION_RETRY, latestSlot, type CompensationRetryPolicy, type SagaDecision } from '../core/saga/saga-decision.js';
import { workflowStream } from '../core/streams.js';
import type { EffectShell } from './effect-shell.js';
import type { SagaRegistry } from './saga-registry.js';
import type { Decision } from './workflow-store.js';
import { noopSagaMetrics, type SagaMetrics } from '../metrics/saga-metrics.js';
import { ATTR, currentTraceparent, inSpan, sagaStepAttributes, SPAN, SpanKind } from '../tracing/index.js';

export interface SagaStepView {
  name: string;
  tool: string;
  reversibility: string;
  effectId: string;
  state: string;
  receipt?: string;
  /** The latest try of the compensation (`tries` > 1 when one was never sent and was sent again). */
  compensation?: { name: string; tool: string; effectId: string; state: string; receipt?: string; tries: number };
}

export interface SagaView {
  saga: string;
  workflowId: string;
  tenant: string;
  status: 'running' | 'paused' | 'compensating' | 'completed' | 'compensated' | 'compensation_failed';
  why?: string;
  steps: SagaStepView[];
}

/** Steps, compensations and their retries of one saga advance; more means a defect. */
const MAX_MOVES = 100;

/** Where one move of a saga leaves it. */
type Move =
  | { kind: 'stop'; view: () => Promise<SagaView> }
  | { kind: 'step'; saga: string; decision: Extract<SagaDecision, { kind: 'run-step' | 'compensate' }> }
  | { kind: 'moved' };

/**
 * Drives a saga forward from its workflow stream: each step is an effect through the shell with
 * its own key; progress is events in the same stream, so any instance can resume it.
 */
export class SagaRunner {
  constructor(private readonly shell: EffectShell, private readonly sagas: SagaRegistry, private readonly metrics: SagaMetrics = noopSagaMetrics, private readonly retry: CompensationRetryPolicy = DEFAULT_COMPENSATION_RETRY) {}

  /** Starts (idempotently on the workflowId) and advances a saga as far as it can go now. */
  async start(tenant: string, workflowId: string, name: string, rawInput: unknown, startedBy: string): Promise<SagaView> {
    const saga = this.sagas.get(name);
    if (!saga) throw new EffectdError('not_found', `no saga "${name}"; registered sagas: ${this.sagas.names().join(', ') || 'none'}`, { saga: name });
    const parsed = saga.input.safeParse(rawInput);
    if (!parsed.success) throw invalidCommand(`input does not fit saga ${name}`, parsed.error.issues, ['input']);
    const { core } = this.shell;
    await core.update(workflowStream(tenant, workflowId), (workflow) => {
      if (!workflow.saga) {
        const traceparent = currentTraceparent();
        return { append: [{ type: 'SagaStarted', v: 1, at: core.now(), saga: name, version: saga.version, tenant, workflowId, input: parsed.data, startedBy, ...(traceparent !== undefined ? { traceparent } : {}) }], answer: () => undefined };
      }
      const same = workflow.saga.started.saga === name && canonicalJson(workflow.saga.started.input) === canonicalJson(parsed.data);
      if (!same) throw new EffectdError('intent_conflict', `workflow ${workflowId} already runs saga ${workflow.saga.started.saga} with other input; a new saga needs a new workflowId`, { workflowId, saga: workflow.saga.started.saga });
      return { answer: undefined };
    });
    return this.advance(tenant, workflowId);
  }

  /** Takes every step that can be taken now; stops when the saga waits on an unknown step or finishes. */
  async advance(tenant: string, workflowId: string): Promise<SagaView> {
    const { core } = this.shell;
    const stream = workflowStream(tenant, workflowId);
    for (let move = 0; move < MAX_MOVES; move++) {
      // One move: decide on the stream as it is; saga events are appended by the decision itself
      // (re-decided by the store on a lost race), steps run as effects through the shell.
      const next = await core.update(stream, (workflow): Decision<Move> => {
        const { saga, input } = this.definitionOf(workflow, workflowId);
        const decision = decideSaga(saga, input, workflow, core.now(), (key, slot) => this.effectId(tenant, workflowId, key, slot), this.retry);
        switch (decision.kind) {
          case 'finished':
          case 'wait':
            return { answer: { kind: 'stop', view: () => this.view(tenant, workflowId, saga, input, workflow, decision.kind === 'wait' ? decision : undefined) } };
          case 'run-step':
          case 'compensate':
            return { answer: { kind: 'step', saga: saga.name, decision } };
          case 'begin-compensation':
            return { append: [{ type: 'SagaCompensating', v: 1, at: core.now(), failedStep: decision.failedStep, reason: decision.reason }], answer: () => ({ kind: 'moved' }) };
          case 'finish':
            return { append: [{ type: 'SagaFinished', v: 1, at: core.now(), outcome: decision.outcome, reason: decision.reason }], answer: () => {
              this.metrics.sagaRun(saga.name, decision.outcome);
              return { kind: 'moved' };
            } };
        }
      });
      if (next.kind === 'stop') return next.view();
      if (next.kind === 'moved') continue;
      const { decision } = next;
      if (decision.kind === 'compensate') this.metrics.compensation(decision.tool);
      const command = { workflowId, step: decision.stepKey, ...(decision.kind === 'compensate' ? { slot: String(decision.slot) } : {}), tool: decision.tool, args: decision.args };
      await inSpan(SPAN.sagaStep, SpanKind.INTERNAL, async (span) => {
        span?.setAttributes(sagaStepAttributes({ saga: next.saga, tenant, workflowId, stepKey: decision.stepKey, tool: decision.tool, phase: decision.kind === 'compensate' ? 'compensate' : 'run' }));
        const answer = await this.shell.execute(command, { tenant, actor: `saga:${next.saga}` });
        span?.setAttributes({ [ATTR.effectId]: answer.outcome.effectId, [ATTR.outcome]: answer.outcome.status, [ATTR.state]: answer.outcome.state });
      });
    }
    throw new EffectdError('internal', `saga of workflow ${workflowId} did not settle after ${MAX_MOVES} moves; this is a defect`, { workflowId });
  }

  async view(tenant: string, workflowId: string, ...known: [SagaDefinition<any>, unknown, WorkflowState, SagaDecision?] | []): Promise<SagaView> {
    if (known.length === 0) {
      const workflow = await this.shell.core.read(workflowStream(tenant, workflowId));
      const { saga, input } = this.definitionOf(workflow, workflowId);
      return this.view(tenant, workflowId, saga, input, workflow, decideSaga(saga, input, workflow, this.shell.core.now(), (key, slot) => this.effectId(tenant, workflowId, key, slot), this.retry));
    }
    const [saga, , workflow, decision] = known;
    const now = this.shell.core.now();
    const progress = workflow.saga!;
    const stateOf = (effectId: string, effect = workflow.effects.get(effectId)) =>
      ({ effectId, state: effect ? effectStatus(effect, now) : 'not started', ...(effect?.receipt ? { receipt: effect.receipt } : {}) });
    const stepState = (key: string) => stateOf(this.effectId(tenant, workflowId, key));
    const compensationState = (key: string) => {
      const latest = latestSlot(workflow, key, now, (k, slot) => this.effectId(tenant, workflowId, k, slot), this.retry.attempts);
      return latest ? { ...stateOf(latest.effect.effectId, latest.effect), tries: latest.slot + 1 } : { ...stepState(key), tries: 0 };
    };
    const status: SagaView['status'] = progress.finished ? progress.finished.outcome : decision?.kind === 'wait' ? 'paused' : progress.compensating ? 'compensating' : 'running';
    return {
      saga: saga.name, workflowId, tenant, status,
      ...(decision?.kind === 'wait' ? { why: decision.why } : progress.finished ? { why: progress.finished.reason } : {}),
      steps: saga.steps.map((step) => ({
        name: step.name, tool: step.tool, reversibility: step.reversibility, ...stepState(step.name),
        ...(step.compensation ? { compensation: { name: step.compensation.name, tool: step.compensation.tool, ...compensationState(compensationStepKey(step.name)) } } : {}),
      })),
    };
  }

  private definitionOf(workflow: WorkflowState, workflowId: string): { saga: SagaDefinition<any>; input: unknown } {
    if (!workflow.saga) throw new EffectdError('not_found', `workflow ${workflowId} runs no saga`);
    const saga = this.sagas.get(workflow.saga.started.saga);
    if (!saga) throw new EffectdError('not_found', `workflow ${workflowId} runs saga ${workflow.saga.started.saga}, which this effectd does not have registered`);
    return { saga, input: workflow.saga.started.input };
  }

  private effectId(tenant: string, workflowId: string, stepKey: string, slot = 0): string {
    return deriveEffectId(this.shell.core.deps.secret, { tenant, workflowId, step: stepKey, slot: String(slot) });
  }
}

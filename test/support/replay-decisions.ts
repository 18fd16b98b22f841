import { createHash } from 'node:crypto';
import { canonicalJson } from '../../src/core/canonical-json.js';
import { effectStatus, type EffectState } from '../../src/core/effect-state.js';
import { targetKeyOf, type WorkflowState } from '../../src/core/fold.js';
import { nextStep, type EffectPolicy, type Mode, type Step } from '../../src/core/next-step.js';
import type { ReconcilePolicy } from '../../src/core/reconcile-schedule.js';
import { decideSaga, type CompensationRetryPolicy, type SagaDecision } from '../../src/core/saga/saga-decision.js';
import type { SagaDefinition } from '../../src/core/saga/saga-definition.js';

/**
 * "Every decision" effectd takes on a folded workflow at one moment, each reduced to a stable
 * string: the ONE place the replay of recorded histories (test/unit/replay-recorded.unit.spec.ts,
 * test/replay/README.md) computes decisions.
 *
 * The expected strings were produced at e927034 by the deciders of that commit (decideDispatch,
 * decideReconcile, decideInlineReconcile, decideSettleStep, decideSaga; that implementation is kept
 * in test/replay/reference/replay-decisions.e927034.ts.txt). This one takes them from `nextStep`
 * (src/core/next-step.ts), which replaced those deciders, and must give the same strings: each
 * column below says which of nextStep's modes stands for which old decider.
 *
 * The strings: the decision's kind (the old deciders' names), then the fields that matter — times
 * relative to `now` (`wait until+250ms`), a saga step's arguments as a digest — and the texts a
 * decision writes into the ledger (an escalation's reason, a proof of absence, a saga's reasons).
 * Not kept: a `wait`'s `why` (only its time), and what a decider returned that the shell never
 * used (see `submit`). A decider that throws gives `throws: <message>`.
 */

/** What one tool's contract said when the history was recorded (the fixture keeps it per tool). */
export interface ToolPolicies {
  reconcile: ReconcilePolicy;
  keyPolicy: { dedupesByKey: boolean };
}

/** One effect's decisions at `now`, by mode. */
export interface EffectDecisions {
  /** `effectStatus` at `now` (the lease applied). */
  status: string;
  /** What a resubmission of the same step with the same intent meets (was `decideDispatch`; now nextStep's `submit`). */
  submit: string;
  /** The scheduled reconciler's next step (was `decideReconcile`; now nextStep's `reconcile`). */
  reconcile: string;
  /** The reconcile-first of a resubmitted unknown effect, before its lookup (was `decideInlineReconcile`, lookedUp false). */
  inline: string;
  /** An inline settle's first step (was `decideSettleStep`, nothing done yet; now nextStep's `settle`). */
  settleOwn: string;
  /** An inline settle's step after it looked up and resent (the same, lookedUp and resent). */
  settleOther: string;
}

/** How a saga's decisions are taken: its definition (today's, by name and version) and the compensation retry it ran with. */
export interface SagaContext {
  definition(name: string, version: number): SagaDefinition<any>;
  retry: CompensationRetryPolicy;
}

export interface WorkflowDecisions {
  /** By effect id. */
  effects: Record<string, EffectDecisions>;
  /** The saga's next move (`decideSaga`), when the workflow runs one. */
  saga?: string;
}

export function decisionsAt(workflow: WorkflowState, now: number, policyOf: (tool: string) => ToolPolicies, saga?: SagaContext): WorkflowDecisions {
  const effects: Record<string, EffectDecisions> = {};
  for (const effect of workflow.effects.values()) {
    // concurrentTargets only matters to a new effect's target hold; every effect here is declared.
    const policy: EffectPolicy = { ...policyOf(effect.declared.tool).reconcile, concurrentTargets: false, committedPerTarget: 'many' };
    const step = (mode: Mode) => nextStep({ effect, policy, now, mode });
    const resubmitted = (): Step => step({ kind: 'submit', submission: submissionOf(effect), workflow, progress: { lookedUp: false, resent: false }, tenantWindow: false });
    effects[effect.effectId] = {
      status: safely(() => effectStatus(effect, now)),
      submit: safely(() => submitted(resubmitted())),
      reconcile: safely(() => reconcileStep(step({ kind: 'reconcile' }), now)),
      inline: safely(() => inline(effect, now, resubmitted, () => step({ kind: 'settle', progress: { lookedUp: false, resent: false } }))),
      settleOwn: safely(() => reconcileStep(step({ kind: 'settle', progress: { lookedUp: false, resent: false } }), now)),
      settleOther: safely(() => reconcileStep(step({ kind: 'settle', progress: { lookedUp: true, resent: true } }), now)),
    };
  }
  if (!workflow.saga || !saga) return { effects };
  const { started } = workflow.saga;
  return { effects, saga: safely(() => sagaDecision(decideSaga(saga.definition(started.saga, started.version), started.input, workflow, now, effectIdFor(workflow), saga.retry), now)) };
}

function safely(decide: () => string): string {
  try {
    return decide();
  } catch (error) {
    return `throws: ${(error as Error).message}`;
  }
}

function relative(time: number, now: number): string {
  const delta = time - now;
  return `${delta >= 0 ? '+' : ''}${delta}ms`;
}

/** The same step submitted again with the same intent, as the shell would hand it to nextStep. */
function submissionOf(effect: EffectState) {
  const { declared } = effect;
  return { effectId: effect.effectId, intentDigest: declared.intentDigest, tool: declared.tool, target: declared.target, args: declared.args, step: declared.step, repeat: declared.repeat !== undefined, contentKey: declared.contentKey, targetKey: targetKeyOf(declared.tool, declared.target) };
}

/**
 * What a resubmission meets. decideDispatch said `retry-same-key` or `hold-unknown` for an unknown
 * effect and the shell reconciled first with both (nextStep: lookup, resend, or answer unsettled);
 * `held` whether or not the hold still held (the shell then answered held or released it).
 */
function submitted(step: Step): string {
  switch (step.kind) {
    case 'answer':
      return step.as === 'replayed' ? 'replay' : step.as === 'unsettled' ? 'reconcile-first' : step.as;
    case 'claim':
      return 'claim';
    case 'lookup':
    case 'resend':
      return 'reconcile-first';
    case 'release':
      return 'held';
    case 'read':
      return step.what === 'holder' ? 'held' : `read ${step.what}`;
    case 'refuse':
      return `refuse ${step.code}`;
    default:
      return `unexpected ${step.kind}`;
  }
}

/**
 * decideInlineReconcile(lookedUp false), taken on an unknown effect when it is resubmitted: a live
 * claim is waited on (nextStep's settle), an unknown effect is looked up or resent (nextStep's
 * submit), anything else has nothing to do inline.
 */
function inline(effect: EffectState, now: number, resubmitted: () => Step, settle: () => Step): string {
  const status = effectStatus(effect, now);
  if (status === 'dispatching') return reconcileStep(settle(), now);
  if (status !== 'unknown') return 'none';
  const step = resubmitted();
  return step.kind === 'answer' ? 'none' : reconcileStep(step, now);
}

/** A reconcile-kind step, in the old deciders' names. */
function reconcileStep(step: Step, now: number): string {
  switch (step.kind) {
    case 'none':
    case 'lookup':
    case 'audit':
      return step.kind;
    case 'resend':
      return 'retry-same-key';
    case 'wait':
      return `wait until${relative(step.until, now)}`;
    case 'prove-not-committed':
      return `not-committed: ${step.why}`;
    case 'escalate':
      return `escalate: ${step.reason}`;
    default:
      return `unexpected ${step.kind}`;
  }
}

/** A step's arguments as a short digest of their canonical JSON (they hold receipts: long, but they must not change). */
function argsDigest(args: Record<string, unknown>): string {
  return createHash('sha256').update(canonicalJson(args)).digest('hex').slice(0, 12);
}

function sagaDecision(decision: SagaDecision, now: number): string {
  switch (decision.kind) {
    case 'finished':
      return decision.kind;
    case 'run-step':
      return `run-step ${decision.stepKey} ${decision.tool} args#${argsDigest(decision.args)}`;
    case 'compensate':
      return `compensate ${decision.stepKey} slot ${decision.slot} of ${decision.of} ${decision.tool} args#${argsDigest(decision.args)}`;
    case 'wait':
      return `wait ${decision.stepKey}${decision.retryAt !== undefined ? ` retry at${relative(decision.retryAt, now)}` : ''}`;
    case 'begin-compensation':
      return `begin-compensation ${decision.failedStep}: ${decision.reason}`;
    case 'finish':
      return `finish ${decision.outcome}: ${decision.reason}`;
  }
}

/**
 * The saga runner derives a step's effect id from the server secret (src/shell/saga-runner.ts);
 * the recorded history already names it: the effect declared for that step key and slot. A step
 * not declared yet gets an id no effect has, as the derived one would be.
 */
function effectIdFor(workflow: WorkflowState): (stepKey: string, slot?: number) => string {
  const ids = new Map<string, string>();
  for (const effect of workflow.effects.values()) ids.set(`${effect.declared.step}\n${effect.declared.slot}`, effect.effectId);
  return (stepKey, slot = 0) => ids.get(`${stepKey}\n${slot}`) ?? `not-declared:${stepKey}/${slot}`;
}

import type { EffectState } from '../../src/core/effect-state.js';
import { emptyWorkflow, type WorkflowState } from '../../src/core/fold.js';
import { nextStep, type EffectPolicy, type Progress, type Step } from '../../src/core/next-step.js';
import type { ReconcilePolicy } from '../../src/core/reconcile-schedule.js';

/** The decider in one mode, for tests that state a policy without the hold rules. */
const policyOf = (policy: ReconcilePolicy): EffectPolicy => ({ concurrentTargets: false, committedPerTarget: 'many', ...policy });

export const reconcileStep = (effect: EffectState, now: number, policy: ReconcilePolicy): Step =>
  nextStep({ effect, policy: policyOf(policy), now, mode: { kind: 'reconcile' } });

export const settleStep = (effect: EffectState, now: number, policy: ReconcilePolicy, progress: Progress): Step =>
  nextStep({ effect, policy: policyOf(policy), now, mode: { kind: 'settle', progress } });

/** An identical resubmission of the effect (same intent), with nothing looked up yet. */
export const resubmitStep = (effect: EffectState, now: number, policy: ReconcilePolicy, workflow: WorkflowState = emptyWorkflow): Step =>
  nextStep({
    effect, policy: policyOf(policy), now, lookaside: {},
    mode: {
      kind: 'submit', workflow, tenantWindow: false, progress: { lookedUp: false, resent: false },
      submission: { effectId: effect.effectId, intentDigest: effect.declared.intentDigest, tool: effect.declared.tool, target: effect.declared.target, args: effect.declared.args, step: effect.declared.step, repeat: false, contentKey: effect.declared.contentKey, targetKey: `${effect.declared.tool}\n${effect.declared.target}` },
    },
  });

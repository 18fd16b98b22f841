import type { AgentOutcome } from './agent-answer.js';
import { effectStatus, type EffectState } from './effect-state.js';
import { stillLooking } from './next-step.js';
import { resendVerdict, type ReconcilePolicy } from './reconcile-schedule.js';

export type { AgentOutcome, AgentStatus } from './agent-answer.js';

export interface OutcomeContext {
  now: number;
  replayed: boolean;
  /** When the next answer is expected for an unknown effect (e.g. the end of the contract's settle window). */
  expectAnswerAt?: number;
  /** For a held effect: the effect of the same content it was held against. */
  matched?: EffectState;
  /** The tool's contract, so an unknown answer says how it will really be settled (lookup, resend, a human). */
  policy?: ReconcilePolicy;
}

type OutcomeBase = Pick<AgentOutcome, 'effectId' | 'state' | 'tool' | 'target' | 'replayed'>;

/**
 * `{ ...base, ...rest }`, as Object.assign: on Node 20 a spread that adds members costs
 * microseconds (see settle in fold.ts), and every answer is built this way. Same members, same order.
 */
function outcomeOf(base: OutcomeBase, rest: Omit<AgentOutcome, keyof OutcomeBase>): AgentOutcome {
  return Object.assign({}, base, rest);
}

export function agentOutcome(effect: EffectState, context: OutcomeContext): AgentOutcome {
  const state = effectStatus(effect, context.now);
  const { tool, target } = effect.declared;
  const base: OutcomeBase = { effectId: effect.effectId, state, tool, target, replayed: context.replayed };
  switch (state) {
    case 'held':
      return heldOutcome(effect, base, context);
    case 'committed':
      if (effect.lateArrival) {
        // It was answered not_done once: say so, so an agent that did it again under a new step knows there are two.
        return outcomeOf(base, { status: 'done', receipt: effect.receipt, reason: effect.reason, message: `done: ${tool} for ${target} happened after all (receipt ${effect.receipt ?? 'recorded'}): its request reached the provider after effectd had answered not_done at ${new Date(effect.lateArrival.provenAbsentAt).toISOString()}. If another step did it again, an operator has both on the queue; do not start another ${tool} for ${target}.` });
      }
      return outcomeOf(base, { status: 'done', receipt: effect.receipt, reason: effect.reason, message: `done: ${tool} for ${target} happened (receipt ${effect.receipt ?? 'recorded'}).` });
    case 'failed_before_effect':
      return outcomeOf(base, { status: 'not_done', reason: effect.reason, message: `not_done: ${tool} for ${target} did not happen (${effect.reason ?? 'refused by the provider'}); it is safe to try again as a new step.` });
    case 'terminal_failure': {
      if (context.policy && stillLooking(effect, context.now, context.policy)) {
        // Nothing is sent again under a poisoned key, but the provider may have committed before it stored the failure.
        const until = context.expectAnswerAt !== undefined ? new Date(context.expectAnswerAt).toISOString() : undefined;
        return outcomeOf(base, {
          status: 'unknown', reason: effect.reason, reference: effect.effectId, ...(until ? { expectAnswerBy: until } : {}),
          checking: `looking reference ${effect.effectId} up at the provider (it answered with a stored failure, so nothing is sent again)`,
          message: `unknown: ${tool} for ${target} may or may not have happened; the provider answered with a stored failure, so effectd sends nothing again and keeps looking it up (reference ${effect.effectId})${until ? ` until ${until}` : ''}, then a human decides. Do not start another ${tool} for ${target}.`,
        });
      }
      return outcomeOf(base, { status: 'unknown', reason: effect.reason, reference: effect.effectId, checking: 'waiting for a human: the provider replays a stored failure under this key', message: `unknown: ${tool} for ${target} is held for a human (the provider keeps replaying a stored failure, reference ${effect.effectId}). Do not start another ${tool} for ${target}.` });
    }
    case 'escalated':
      return outcomeOf(base, { status: 'unknown', reason: effect.reason, reference: effect.effectId, checking: 'waiting for a human to confirm with the provider', message: `unknown: ${tool} for ${target} could not be confirmed automatically and is with a human (reference ${effect.effectId}). Do not start another ${tool} for ${target}.` });
    case 'declared':
    case 'dispatching':
    case 'unknown': {
      const settle = state === 'dispatching' ? { checking: 'the request is in flight', doing: 'the request is still in flight' } : settling(effect, context);
      const expect = context.expectAnswerAt !== undefined && !settle.human ? new Date(context.expectAnswerAt).toISOString() : undefined;
      return outcomeOf(base, {
        status: 'unknown',
        reason: effect.reason,
        reference: effect.effectId,
        checking: settle.checking,
        ...(expect ? { expectAnswerBy: expect } : {}),
        message: `unknown: ${tool} for ${target} may or may not have happened; ${settle.doing} (reference ${effect.effectId})${expect ? `, answer expected by ${expect}` : ''}. Do not start another ${tool} for ${target}.`,
      });
    }
  }
}

/**
 * What effectd will really do about an unknown effect, from the tool's contract: look it up at the
 * provider; without a lookup, resend the same request under the same key while the key protects
 * it; otherwise a human decides (docs/design.md, "Reconciliation").
 */
function settling(effect: EffectState, context: OutcomeContext): { checking: string; doing: string; human?: true } {
  const { policy } = context;
  if (!policy) return { checking: 'reconciling as the tool\'s contract allows', doing: 'effectd is settling it as the tool\'s contract allows (a lookup, a resend under the same key, or a human)' };
  if (policy.lookup !== 'none') {
    return { checking: `asking the provider whether reference ${effect.effectId} exists (lookup by ${policy.lookup})`, doing: 'effectd is checking with the provider' };
  }
  const resend = resendVerdict(effect, context.now, policy);
  if (resend.allowed) {
    return {
      checking: 'resending the same request under the same idempotency key (the provider has no lookup)',
      doing: 'the provider offers no way to look it up, so effectd will send the same request again under the same idempotency key, which the provider deduplicates, so it cannot happen twice',
    };
  }
  return {
    checking: `waiting for a human: the tool has no lookup and ${resend.why}`,
    doing: `effectd cannot find out by itself (the tool has no lookup and ${resend.why}), so a human will confirm it with the provider`,
    human: true,
  };
}

function heldOutcome(effect: EffectState, base: OutcomeBase, context: OutcomeContext): AgentOutcome {
  const { tool, target, step } = effect.declared;
  const held = effect.heldBy!;
  const matched = context.matched;
  const matchedState = matched ? effectStatus(matched, context.now) : undefined;
  // Whatever the basis, a step held behind an effect that happened is already done: nothing was sent for it.
  if (matched && matchedState === 'committed') {
    const what = held.basis === 'target' ? `${target} already had ${tool} in step ${held.step}` : `${tool} for ${target} happened in step ${held.step}`;
    return outcomeOf(base, {
      status: 'done', receipt: matched.receipt, reason: held.basis === 'target' ? `the same target as step ${held.step}, which is committed` : `same content as step ${held.step}`, reference: matched.effectId,
      message: `already done: ${what} (receipt ${matched.receipt ?? 'recorded'}); nothing was sent for step ${step}. To do it again on purpose, resubmit with "repeat": {"reason": "…"}.`,
    });
  }
  if (held.basis === 'target' && matchedState === 'failed_before_effect') {
    // What it waited on proved not to have happened: it goes on its next submission, under the usual rules.
    return outcomeOf(base, {
      status: 'not_done', reason: `held while step ${held.step} on the same target was open; that step did not happen`, reference: held.effectId,
      message: `not_done: nothing was sent for step ${step} yet (${tool} for ${target} was held while step ${held.step} on the same target was unconfirmed; step ${held.step} did not happen). Submit step ${step} again to send it, if it is still wanted.`,
    });
  }
  if (held.basis === 'target') {
    return outcomeOf(base, {
      status: 'unknown', reason: `step ${held.step} on the same target is ${matchedState ?? 'not confirmed yet'}`, reference: held.effectId,
      checking: `whether step ${held.step} (${held.effectId}) happened`,
      message: `being checked: ${tool} for ${target} from step ${held.step} is not confirmed yet (reference ${held.effectId}); nothing was sent for step ${step}. Do not start another ${tool} for ${target}.`,
    });
  }
  return outcomeOf(base, {
    status: 'unknown', reason: `same content as step ${held.step}, which is ${matchedState ?? 'not confirmed yet'}`, reference: held.effectId,
    checking: `whether step ${held.step} (${held.effectId}) happened`,
    message: `being checked: ${tool} for ${target} from step ${held.step} is not confirmed yet (reference ${held.effectId}); nothing was sent for step ${step}. Do not start another ${tool} for ${target}.`,
  });
}

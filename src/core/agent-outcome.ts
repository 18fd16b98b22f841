import { effectStatus, type EffectState, type EffectStatus } from './effect-state.js';

/** What an agent is told. Three states, never two. */
export type AgentStatus = 'done' | 'not_done' | 'unknown';

export interface AgentOutcome {
  status: AgentStatus;
  effectId: string;
  /** The ledger's state of the effect, for harnesses that want the detail. */
  state: EffectStatus;
  tool: string;
  target: string;
  receipt?: string;
  reason?: string;
  /** True when this answer came from the ledger without calling the provider. */
  replayed: boolean;
  /** For `unknown`: the reference stamped into the effect, what is being checked, and when to ask again. */
  reference?: string;
  checking?: string;
  expectAnswerBy?: string;
  /** One sentence a model can't misread. */
  message: string;
}

export interface OutcomeContext {
  now: number;
  replayed: boolean;
  /** When the next answer is expected for an unknown effect (e.g. the end of the contract's settle window). */
  expectAnswerAt?: number;
  /** For a held effect: the effect of the same content it was held against. */
  matched?: EffectState;
}

export function agentOutcome(effect: EffectState, context: OutcomeContext): AgentOutcome {
  const state = effectStatus(effect, context.now);
  const { tool, target } = effect.declared;
  const base = { effectId: effect.effectId, state, tool, target, replayed: context.replayed };
  switch (state) {
    case 'held':
      return heldOutcome(effect, base, context);
    case 'committed':
      return { ...base, status: 'done', receipt: effect.receipt, reason: effect.reason, message: `done: ${tool} for ${target} happened (receipt ${effect.receipt ?? 'recorded'}).` };
    case 'failed_before_effect':
      return { ...base, status: 'not_done', reason: effect.reason, message: `not_done: ${tool} for ${target} did not happen (${effect.reason ?? 'refused by the provider'}); it is safe to try again as a new step.` };
    case 'terminal_failure':
      return { ...base, status: 'unknown', reason: effect.reason, reference: effect.effectId, checking: 'waiting for a human: the provider replays a stored failure under this key', message: `unknown: ${tool} for ${target} is held for a human (the provider keeps replaying a stored failure, reference ${effect.effectId}). Do not start another ${tool} for ${target}.` };
    case 'escalated':
      return { ...base, status: 'unknown', reason: effect.reason, reference: effect.effectId, checking: 'waiting for a human to confirm with the provider', message: `unknown: ${tool} for ${target} could not be confirmed automatically and is with a human (reference ${effect.effectId}). Do not start another ${tool} for ${target}.` };
    default: {
      const expect = context.expectAnswerAt !== undefined ? new Date(context.expectAnswerAt).toISOString() : undefined;
      const checking = state === 'dispatching' ? 'the request is in flight' : `asking the provider whether reference ${effect.effectId} exists`;
      return {
        ...base,
        status: 'unknown',
        reason: effect.reason,
        reference: effect.effectId,
        checking,
        ...(expect ? { expectAnswerBy: expect } : {}),
        message: `unknown: ${tool} for ${target} may or may not have happened; effectd is checking with the provider (reference ${effect.effectId})${expect ? `, answer expected by ${expect}` : ''}. Do not start another ${tool} for ${target}.`,
      };
    }
  }
}

function heldOutcome(effect: EffectState, base: Omit<AgentOutcome, 'status' | 'message'>, context: OutcomeContext): AgentOutcome {
  const { tool, target, step } = effect.declared;
  const held = effect.heldBy!;
  const matched = context.matched;
  const matchedState = matched ? effectStatus(matched, context.now) : undefined;
  if (matched && matchedState === 'committed') {
    return {
      ...base, status: 'done', receipt: matched.receipt, reason: `same content as step ${held.step}`, reference: matched.effectId,
      message: `already done: ${tool} for ${target} happened in step ${held.step} (receipt ${matched.receipt ?? 'recorded'}); nothing was sent for step ${step}. To do it again on purpose, resubmit with "repeat": {"reason": "…"}.`,
    };
  }
  return {
    ...base, status: 'unknown', reason: `same content as step ${held.step}, which is ${matchedState ?? 'not confirmed yet'}`, reference: held.effectId,
    checking: `whether step ${held.step} (${held.effectId}) happened`,
    message: `being checked: ${tool} for ${target} from step ${held.step} is not confirmed yet (reference ${held.effectId}); nothing was sent for step ${step}. Do not start another ${tool} for ${target}.`,
  };
}

/** The outcome of an effect read back later; a held one answers with the state of the effect it was held against. */
export function recordedOutcome(effect: EffectState, now: number, find: (effectId: string) => EffectState | undefined): AgentOutcome {
  const matched = effect.heldBy ? find(effect.heldBy.effectId) : undefined;
  return agentOutcome(effect, { now, replayed: true, ...(matched ? { matched } : {}) });
}

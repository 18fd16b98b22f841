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

export function agentStatusOf(status: EffectStatus): AgentStatus {
  if (status === 'committed') return 'done';
  if (status === 'failed_before_effect') return 'not_done';
  return 'unknown';
}

export interface OutcomeContext {
  now: number;
  replayed: boolean;
  /** When the next answer is expected for an unknown effect (e.g. the end of the contract's settle window). */
  expectAnswerAt?: number;
}

export function agentOutcome(effect: EffectState, context: OutcomeContext): AgentOutcome {
  const state = effectStatus(effect, context.now);
  const { tool, target } = effect.declared;
  const base = { effectId: effect.effectId, state, tool, target, replayed: context.replayed };
  switch (state) {
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

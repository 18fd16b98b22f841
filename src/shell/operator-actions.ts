import { effectStatus, type EffectState } from '../core/effect-state.js';
import { EffectdError, isEffectdError } from '../core/errors.js';
import type { EffectResolved } from '../core/events.js';
import { workflowStream } from '../core/streams.js';
import { MAX_RACES, type ShellAnswer, type ShellCore } from './shell-core.js';

export type Resolution = Pick<EffectResolved, 'resolvedBy' | 'outcome' | 'reason'> & { receipt?: string };

/** What only an operator does; each action is an event naming who did it. */
export class OperatorActions {
  constructor(private readonly core: ShellCore) {}

  /** Settles an escalated, terminal or unknown effect with what the operator found: who, what, and the evidence. */
  async resolve(effect: EffectState, resolution: Resolution): Promise<EffectState> {
    const { core } = this;
    const stream = workflowStream(effect.declared.tenant, effect.declared.workflowId);
    for (let race = 0; race < MAX_RACES; race++) {
      const workflow = await core.read(stream);
      const current = workflow.effects.get(effect.effectId)!;
      const event: EffectResolved = { type: 'EffectResolved', v: 1, at: core.now(), effectId: effect.effectId, ...resolution };
      try {
        const next = (await core.append(stream, workflow, [event])).effects.get(effect.effectId)!;
        core.metrics.resolved(resolution.outcome);
        if (next.unknownSince !== undefined) core.metrics.leftUnknown(next.declared.tool, event.at - next.unknownSince);
        return next;
      } catch (error) {
        if (isEffectdError(error, 'concurrency_conflict')) continue;
        if (isEffectdError(error, 'illegal_transition')) {
          throw new EffectdError('illegal_transition', `effect ${effect.effectId} is ${effectStatus(current, core.now())}: only an escalated, terminal or unknown effect can be resolved`);
        }
        throw error;
      }
    }
    throw new Error(`effect ${effect.effectId}: could not record the resolution after ${MAX_RACES} races`);
  }

  /** Lets a held effect go (a repeat the agent should have declared): it is dispatched now. */
  async release(effect: EffectState, releasedBy: string, reason: string): Promise<ShellAnswer> {
    const { core } = this;
    const stream = workflowStream(effect.declared.tenant, effect.declared.workflowId);
    for (let race = 0; race < MAX_RACES; race++) {
      const workflow = await core.read(stream);
      const current = workflow.effects.get(effect.effectId)!;
      if (current.recordedStatus !== 'held') throw new EffectdError('illegal_transition', `effect ${effect.effectId} is ${effectStatus(current, core.now())}, not held`);
      try {
        const released = await core.append(stream, workflow, [{ type: 'EffectReleased', v: 1, at: core.now(), effectId: effect.effectId, releasedBy, reason }]);
        const prepared = core.prepared(released.effects.get(effect.effectId)!, stream);
        if (!prepared) throw new EffectdError('unknown_tool', `tool ${effect.declared.tool} is no longer configured`);
        const answer = await core.claimAndDispatch(prepared, released, released.effects.get(effect.effectId));
        if (answer) return answer;
      } catch (error) {
        if (!isEffectdError(error, 'concurrency_conflict')) throw error;
      }
    }
    throw new Error(`effect ${effect.effectId}: could not release after ${MAX_RACES} races`);
  }
}

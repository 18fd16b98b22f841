import { effectStatus, type EffectState } from '../core/effect-state.js';
import { EffectdError } from '../core/errors.js';
import type { AttemptStarted, DuplicateHandled, EffectReleased, EffectResolved } from '../core/events.js';
import { workflowStream } from '../core/streams.js';
import { accepts, type ShellAnswer, type ShellCore } from './shell-core.js';

import type { Resolution } from './shell-port.js';
export type { Resolution };

/** What only an operator does; each action is an event naming who did it. */
export class OperatorActions {
  constructor(private readonly core: ShellCore) {}

  /** Settles an escalated, terminal or unknown effect with what the operator found: who, what, and the evidence. */
  resolve(effect: EffectState, resolution: Resolution): Promise<EffectState> {
    const { core } = this;
    return core.update(workflowStream(effect.declared.tenant, effect.declared.workflowId), (workflow) => {
      const current = workflow.effects.get(effect.effectId)!;
      const event: EffectResolved = { type: 'EffectResolved', v: 1, at: core.now(), effectId: effect.effectId, ...resolution };
      if (!accepts(workflow, [event])) {
        throw new EffectdError('illegal_transition', `effect ${effect.effectId} is ${effectStatus(current, core.now())}: only an escalated, terminal or unknown effect can be resolved`);
      }
      return {
        append: [event],
        answer: (after) => {
          const next = after.effects.get(effect.effectId)!;
          core.metrics.resolved(resolution.outcome);
          if (next.unknownSince !== undefined) core.metrics.leftUnknown(next.declared.tool, event.at - next.unknownSince);
          return next;
        },
      };
    });
  }

  /** Lets a held effect go (a repeat the agent should have declared): released and claimed in one append, then dispatched. */
  async release(effect: EffectState, releasedBy: string, reason: string): Promise<ShellAnswer> {
    const { core } = this;
    const stream = workflowStream(effect.declared.tenant, effect.declared.workflowId);
    const { prepared, started } = await core.update(stream, (workflow) => {
      const current = workflow.effects.get(effect.effectId)!;
      if (current.recordedStatus !== 'held') throw new EffectdError('illegal_transition', `effect ${effect.effectId} is ${effectStatus(current, core.now())}, not held`);
      const prepared = core.prepared(current, stream);
      if (!prepared) throw new EffectdError('unknown_tool', `tool ${effect.declared.tool} is no longer configured`);
      const released: EffectReleased = { type: 'EffectReleased', v: 1, at: core.now(), effectId: effect.effectId, releasedBy, reason };
      const claim = core.claimEvents(prepared, { ...current, recordedStatus: 'declared' });
      return { append: [released, ...claim], answer: () => ({ prepared, started: claim[claim.length - 1] as AttemptStarted }) };
    });
    return core.dispatchAndRecord(prepared, started);
  }

  /** Records how an operator dealt with one extra object of a detected duplicate. */
  handleDuplicate(effect: EffectState, handling: Omit<DuplicateHandled, 'type' | 'v' | 'at' | 'effectId'>): Promise<EffectState> {
    const { core } = this;
    return core.update(workflowStream(effect.declared.tenant, effect.declared.workflowId), (workflow) => {
      const event: DuplicateHandled = { type: 'DuplicateHandled', v: 1, at: core.now(), effectId: effect.effectId, ...handling };
      if (!accepts(workflow, [event])) {
        throw new EffectdError('illegal_transition', `receipt ${handling.receipt} is not an unhandled extra object of effect ${effect.effectId}'s detected duplicate`, { effectId: effect.effectId, receipt: handling.receipt });
      }
      return { append: [event], answer: (after) => after.effects.get(effect.effectId)! };
    });
  }
}

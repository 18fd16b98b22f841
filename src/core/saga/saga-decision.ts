import { doublingDelayMs } from '../backoff.js';
import { COMPENSATE_STATUSES } from '../effect-lifecycle.js';
import { effectStatus, settledNeverSent, type EffectState, type EffectStatus } from '../effect-state.js';
import type { WorkflowState } from '../fold.js';
import { compensationStepKey, type Receipts, type SagaDefinition } from './saga-definition.js';
import { EffectdError } from '../errors.js';

/** What the saga runner does next, decided from the workflow stream alone. */
export type SagaDecision =
  | { kind: 'run-step'; stepKey: string; tool: string; args: Record<string, unknown> }
  | { kind: 'compensate'; stepKey: string; slot: number; tool: string; args: Record<string, unknown>; of: string }
  | { kind: 'wait'; stepKey: string; why: string; retryAt?: number }
  | { kind: 'begin-compensation'; failedStep: string; reason: string }
  | { kind: 'finish'; outcome: 'completed' | 'compensated' | 'compensation_failed'; reason: string }
  | { kind: 'finished' };

/** A step in one of these statuses makes the saga compensate (the lifecycle table's saga column). */
const PROVEN_FAILURE: ReadonlySet<string> = COMPENSATE_STATUSES;

/**
 * A compensation whose request never left (its provider refused the connection) is sent again as a
 * new slot, a new effect with its own key: nothing happened under the old one, and an undo must
 * not be left to a human because its provider blinked. Backoff doubles from the first delay;
 * after `attempts` tries a human is asked (configurable: `sagas.compensationRetry`).
 */
export interface CompensationRetryPolicy {
  attempts: number;
  firstDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_COMPENSATION_RETRY: CompensationRetryPolicy = { attempts: 8, firstDelayMs: 1_000, maxDelayMs: 60_000 };

/** How long after try `slot` (0-based) was refused the next one is sent. */
export function compensationRetryDelayMs(slot: number, policy: CompensationRetryPolicy = DEFAULT_COMPENSATION_RETRY): number {
  return doublingDelayMs(slot, policy.firstDelayMs, policy.maxDelayMs);
}

/** The latest slot of a step key that has an effect (slots are tried 0, 1, 2… in order, at most `attempts`). */
export function latestSlot(workflow: WorkflowState, stepKey: string, now: number, effectIdFor: EffectIdFor, attempts: number): { slot: number; effect: EffectState; status: EffectStatus } | undefined {
  let latest: { slot: number; effect: EffectState; status: EffectStatus } | undefined;
  for (let slot = 0; slot < attempts; slot++) {
    const effect = workflow.effects.get(effectIdFor(stepKey, slot));
    if (!effect) break;
    latest = { slot, effect, status: effectStatus(effect, now) };
  }
  return latest;
}

export type EffectIdFor = (stepKey: string, slot?: number) => string;

/**
 * Steps run in order, each only after the one before it committed, so an irreversible step (which
 * validation puts after every compensable one) runs only once every compensable step committed.
 * A proven failure compensates the committed steps in reverse order; an unknown step pauses the
 * saga: nothing is compensated on a guess.
 */
export function decideSaga<I>(saga: SagaDefinition<I>, input: I, workflow: WorkflowState, now: number, effectIdFor: EffectIdFor, retry: CompensationRetryPolicy = DEFAULT_COMPENSATION_RETRY): SagaDecision {
  const progress = workflow.saga;
  if (!progress) throw new EffectdError('internal', 'decideSaga needs a started saga');
  if (progress.finished) return { kind: 'finished' };
  const stateOf = (stepKey: string) => {
    const effect = workflow.effects.get(effectIdFor(stepKey));
    return effect ? { effect, status: effectStatus(effect, now) } : undefined;
  };

  const receipts: Record<string, string> = {};
  const committed: string[] = [];
  for (const step of saga.steps) {
    const current = stateOf(step.name);
    if (current?.status === 'committed') {
      receipts[step.name] = current.effect.receipt ?? '';
      committed.push(step.name);
      continue;
    }
    if (progress.compensating) break;
    if (!current) return { kind: 'run-step', stepKey: step.name, tool: step.tool, args: step.args(input, receipts as Receipts) };
    if (PROVEN_FAILURE.has(current.status)) return { kind: 'begin-compensation', failedStep: step.name, reason: current.effect.reason ?? current.status };
    return { kind: 'wait', stepKey: step.name, why: current.status === 'held' ? 'held by the content index: an operator must release it' : `step ${step.name} is ${current.status}; the saga waits for reconciliation or a human` };
  }
  if (!progress.compensating) return { kind: 'finish', outcome: 'completed', reason: `all ${saga.steps.length} steps committed` };

  // Compensate committed steps only, last first; a step that never happened is never compensated.
  // A compensation that failed for sure does not stop the others: undo everything that can be
  // undone, then hand the rest to a human.
  const failedUndos: string[] = [];
  for (const name of [...committed].reverse()) {
    const step = saga.steps.find((s) => s.name === name)!;
    if (!step.compensation) continue;
    const key = compensationStepKey(step.name);
    const current = latestSlot(workflow, key, now, effectIdFor, retry.attempts);
    const compensate = (slot: number): SagaDecision => ({ kind: 'compensate', stepKey: key, slot, tool: step.compensation!.tool, args: step.compensation!.args(receipts[name]!, input, receipts as Receipts), of: name });
    if (!current) return compensate(0);
    if (current.status === 'committed') continue;
    if (PROVEN_FAILURE.has(current.status)) {
      const next = current.slot + 1;
      if (settledNeverSent(current.effect) && next < retry.attempts) {
        const retryAt = (current.effect.settledAt ?? current.effect.lastEventAt) + compensationRetryDelayMs(current.slot, retry);
        if (now >= retryAt) return compensate(next);
        return { kind: 'wait', stepKey: key, retryAt, why: `compensation ${step.compensation.name} of ${name} was never sent (${current.effect.reason}); try ${next + 1} of ${retry.attempts} at ${new Date(retryAt).toISOString()}` };
      }
      const tries = current.slot > 0 ? ` (${current.slot + 1} tries)` : '';
      failedUndos.push(`compensation ${step.compensation.name} of ${name} failed${tries}: ${current.effect.reason ?? current.status}`);
      continue;
    }
    return { kind: 'wait', stepKey: key, why: `compensation of ${name} is ${current.status}; waiting for reconciliation or a human` };
  }
  if (failedUndos.length > 0) return { kind: 'finish', outcome: 'compensation_failed', reason: `${failedUndos.join('; ')}; the other committed steps were undone; a human must undo the rest` };
  return { kind: 'finish', outcome: 'compensated', reason: `step ${progress.compensating.failedStep} failed; committed steps undone in reverse order` };
}

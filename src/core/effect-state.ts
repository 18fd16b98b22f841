import type { AttemptFinished, AttemptStarted, EffectDeclared, EffectEvent, ReconciliationChecked } from './events.js';

import { LIFECYCLE } from './effect-lifecycle.js';
import type { EffectStatus } from './effect-status.js';
export type { EffectStatus };

export interface AttemptRecord {
  started: AttemptStarted;
  finished?: AttemptFinished;
}

export interface EffectState {
  effectId: string;
  declared: EffectDeclared;
  /** The status as of the last event; read it through `effectStatus(state, now)`, which applies the lease. */
  recordedStatus: EffectStatus;
  attempts: AttemptRecord[];
  checks: ReconciliationChecked[];
  receipt?: string;
  reason?: string;
  /** When the effect first became unknown (reply lost, lease expired…), for time-in-unknown. */
  unknownSince?: number;
  settledAt?: number;
  resolvedBy?: string;
  /** For a held effect: the effect of the same content it was held against. */
  heldBy?: { effectId: string; step: string; scope: 'workflow' | 'tenant'; basis: 'content' | 'target'; workflowId?: string };
  releasedBy?: string;
  /** Withdrawn before anything was sent (`EffectWithdrawn`): by whom. It settled as not done. */
  withdrawnBy?: string;
  /** After a settle through a resend: what the duplicate audit found (absent until it ran). */
  audit?: EffectAudit;
  /** After a proof of absence: what looking it up once more later found (absent until it ran). */
  absenceAudit?: { verdict: 'confirmed' | 'unverifiable'; at: number };
  /** It was proven absent, then found at the provider after all: the receipt, and whether an operator dealt with it. */
  lateArrival?: { at: number; receipt: string; provenAbsentAt: number; handled?: { action: 'compensated' | 'kept'; by: string; reason: string; compensationEffectId?: string } };
  lastEventAt: number;
  /** Every event of this effect, in order: the evidence an operator reads. */
  log: readonly EffectEvent[];
}

/** The duplicate audit of an effect that settled through a resend. */
export type EffectAudit =
  | { verdict: 'single' | 'unverifiable'; at: number }
  | { verdict: 'duplicates'; at: number; receipts: string[]; handled: Record<string, { action: 'compensated' | 'kept'; by: string; reason: string; compensationEffectId?: string }> };

/**
 * A resend is where a provider that forgets keys early acts twice: an effect committed after one
 * (more than one attempt) is audited once its lookup has settled.
 */
export function needsAudit(effect: EffectState): boolean {
  return effect.recordedStatus === 'committed' && effect.attempts.length > 1 && effect.audit === undefined;
}

/**
 * The objects at the provider no operator has dealt with yet: the extra ones of a detected
 * duplicate, and a late arrival (it happened after effectd answered not_done, so the agent may have
 * done it again under a new step).
 */
export function unhandledDuplicates(effect: EffectState): string[] {
  const late = effect.lateArrival && !effect.lateArrival.handled ? [effect.lateArrival.receipt] : [];
  const audit = effect.audit;
  if (audit?.verdict !== 'duplicates') return late;
  return [...audit.receipts.filter((r) => r !== effect.receipt && !audit.handled[r]), ...late];
}

/** Proven absent by a lookup (not by the provider's own refusal or a human), and not looked up once more since. */
export function absenceUnaudited(effect: EffectState): boolean {
  if (effect.recordedStatus !== 'failed_before_effect' || effect.absenceAudit || effect.resolvedBy !== undefined) return false;
  const last = effect.checks[effect.checks.length - 1];
  return last?.verdict === 'not_committed' && last.at === effect.settledAt;
}

/**
 * Only a human moves it on: escalated, a duplicate nobody has dealt with, or a poisoned key once
 * effectd has nothing left to try (`stillLooking`: its reconciler still looks it up).
 */
export function needsHuman(effect: EffectState, now: number, stillLooking = false): boolean {
  const { human } = LIFECYCLE[effectStatus(effect, now)];
  return human === 'yes' || (human === 'when-no-lookup-left' && !stillLooking) || unhandledDuplicates(effect).length > 0;
}

export function currentAttempt(effect: EffectState): AttemptRecord | undefined {
  return effect.attempts[effect.attempts.length - 1];
}

/** Settled as not done by its own attempt's answer, which was that the request never left. */
export function settledNeverSent(effect: EffectState): boolean {
  return effect.recordedStatus === 'failed_before_effect' && effect.resolvedBy === undefined && currentAttempt(effect)?.finished?.neverSent === true;
}

/** The status at `now`: a claim whose lease has run out is `unknown`, never back to `declared`. */
export function effectStatus(effect: EffectState, now: number): EffectStatus {
  if (effect.recordedStatus === 'dispatching') {
    const attempt = currentAttempt(effect);
    if (attempt && now >= attempt.started.leaseUntil) return 'unknown';
  }
  return effect.recordedStatus;
}

/** When time in unknown started at `now` (a lapsed lease counts from its expiry). */
export function unknownSinceAt(effect: EffectState, now: number): number | undefined {
  if (effect.unknownSince !== undefined) return effect.unknownSince;
  if (effectStatus(effect, now) === 'unknown') return currentAttempt(effect)?.started.leaseUntil;
  return undefined;
}


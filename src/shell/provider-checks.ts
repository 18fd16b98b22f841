import { currentAttempt, type EffectState } from '../core/effect-state.js';
import type { AbsenceAudited, DuplicateDetected, LateArrivalDetected, ReconciliationChecked, ResendAudited } from '../core/events.js';
import type { WorkflowState } from '../core/fold.js';
import type { EffectPolicy } from '../core/next-step.js';
import type { LookupResult } from '../providers/provider-router.js';
import type { PreparedEffect, ShellCore } from './shell-core.js';

export const LOOKUP_METHOD = { key: 'lookup-by-key', reference: 'lookup-by-reference', name: 'lookup-by-name' } as const;

export function methodOf(policy: EffectPolicy): ReconciliationChecked['method'] {
  return LOOKUP_METHOD[policy.lookup as keyof typeof LOOKUP_METHOD];
}

/** Asks the provider whether the effect exists: what was asked and seen, as the event to record. */
export async function lookUp(core: ShellCore, prepared: PreparedEffect, effect: EffectState, workflow: WorkflowState): Promise<ReconciliationChecked> {
  const { policy } = prepared.tool;
  const attempt = currentAttempt(effect)!.started;
  // What a look proves is judged by when it was asked: an answer that took long still describes the provider as it was then.
  const askedAt = core.now();
  const result: LookupResult = await core.askProvider(prepared, attempt.providerKey);
  const base = { type: 'ReconciliationChecked' as const, v: 1 as const, at: core.now(), askedAt, effectId: effect.effectId, method: methodOf(policy) };
  if (result.kind === 'unsupported') return { ...base, asked: 'nothing (no lookup)', seen: 'unsupported', verdict: 'unanswered' };
  if (result.kind === 'error') return { ...base, asked: result.asked, seen: result.seen, verdict: 'unanswered' };
  if (result.kind !== 'found') return { ...base, asked: result.asked, seen: result.seen, verdict: 'pending' };
  // A key or a stamped reference names this effect alone. A name is not unique: only a match no
  // other effect of this workflow already owns can be this one's.
  const owned = policy.lookup === 'name' ? new Set([...workflow.effects.values()].filter((e) => e.effectId !== effect.effectId && e.receipt).map((e) => e.receipt!)) : new Set<string>();
  const receipt = result.receipts.find((r) => !owned.has(r));
  if (!receipt) return { ...base, asked: result.asked, seen: `${result.seen}, all owned by other effects`, verdict: 'pending' };
  return { ...base, asked: result.asked, seen: result.seen, verdict: 'committed', receipt };
}

/**
 * A proof of absence looked up once more, later: found now means its request reached the provider
 * after the settle window — it happened (a late arrival); else the proof stands (or could not be checked).
 */
export async function auditAbsence(core: ShellCore, prepared: PreparedEffect, effect: EffectState, workflow: WorkflowState): Promise<AbsenceAudited | LateArrivalDetected> {
  const looked = await lookUp(core, prepared, effect, workflow);
  const base = { v: 1 as const, at: looked.at, effectId: effect.effectId, asked: looked.asked, seen: looked.seen };
  if (looked.verdict === 'committed') return { ...base, type: 'LateArrivalDetected', receipt: looked.receipt!, provenAbsentAt: effect.settledAt! };
  return { ...base, type: 'AbsenceAudited', verdict: looked.verdict === 'unanswered' ? 'unverifiable' : 'confirmed' };
}

/**
 * After a settle through a same-key resend: every object at the provider carrying this effect's
 * reference (or key). A provider that forgot the key sooner than its contract says acted twice;
 * that cannot be prevented, but it is noticed, recorded with every receipt, and put before a human.
 */
export async function auditResend(core: ShellCore, prepared: PreparedEffect, effect: EffectState): Promise<DuplicateDetected | ResendAudited> {
  const base = { v: 1 as const, at: core.now(), effectId: effect.effectId };
  const result = await core.askProvider(prepared, currentAttempt(effect)!.started.providerKey);
  if (result.kind === 'unsupported') return { ...base, type: 'ResendAudited', verdict: 'unverifiable', asked: 'nothing (the tool has no lookup)', seen: 'unsupported' };
  if (result.kind !== 'found') return { ...base, type: 'ResendAudited', verdict: result.kind === 'error' ? 'unverifiable' : 'single', asked: result.asked, seen: result.seen };
  const receipts = [...new Set([effect.receipt!, ...result.receipts])].filter(Boolean);
  if (receipts.length < 2) return { ...base, type: 'ResendAudited', verdict: 'single', asked: result.asked, seen: result.seen };
  return { ...base, type: 'DuplicateDetected', receipts, asked: result.asked, seen: result.seen };
}

import { doublingDelayMs } from './backoff.js';
import { currentAttempt, effectStatus, type EffectState } from './effect-state.js';

/** What a tool's contract offers for finding out whether an effect happened. */
export interface ReconcilePolicy {
  /** How the provider can be asked: by key, by stamped reference, by name, or not at all. */
  lookup: 'key' | 'reference' | 'name' | 'none';
  /** "Not found" from the lookup, after the settle window, proves the effect did not happen. */
  lookupConsistent: boolean;
  /** The provider deduplicates a resend carrying the same key. */
  dedupesByKey: boolean;
  /** How long after a dispatch a provider may still commit or become searchable. */
  settleWindowMs: number;
}

export type ReconcileStep =
  | { kind: 'none' }
  | { kind: 'wait'; until: number; why: string }
  | { kind: 'lookup' }
  | { kind: 'retry-same-key' }
  | { kind: 'not-committed'; why: string }
  | { kind: 'escalate'; reason: string };

const FIRST_RECHECK_MS = 250;
const MAX_RECHECK_MS = 30_000;

/**
 * The reconciler's next step for one open effect (DESIGN.md, "Reconciliation"): look it up; not
 * found → re-check with backoff until the settle window passes; then resend with the same key
 * only while the provider still remembers it; otherwise prove absence or hand it to a human.
 */
export function decideReconcile(effect: EffectState, now: number, policy: ReconcilePolicy): ReconcileStep {
  const status = effectStatus(effect, now);
  const attempt = currentAttempt(effect);
  if (status === 'dispatching') return { kind: 'wait', until: attempt!.started.leaseUntil, why: 'a live claim is in flight' };
  if (status !== 'unknown' || !attempt) return { kind: 'none' };

  const dispatchedAt = attempt.started.at;
  const settledBy = dispatchedAt + policy.settleWindowMs;
  const key = attempt.started;
  const keyProtects = keyStillProtects(effect, now, policy);
  const checksSinceDispatch = effect.checks.filter((c) => c.at >= dispatchedAt);

  if (policy.lookup !== 'none') {
    const last = checksSinceDispatch[checksSinceDispatch.length - 1];
    if (!last) return { kind: 'lookup' };
    if (now < settledBy) {
      const backoff = doublingDelayMs(checksSinceDispatch.length - 1, FIRST_RECHECK_MS, MAX_RECHECK_MS);
      const next = Math.min(last.at + backoff, settledBy);
      return now >= next ? { kind: 'lookup' } : { kind: 'wait', until: next, why: 'not found yet; the provider may still commit or index it' };
    }
    // The settle window has passed: one last look at or after its end, then decide.
    if (last.at < settledBy) return { kind: 'lookup' };
    if (keyProtects) return { kind: 'retry-same-key' };
    if (policy.lookupConsistent) return { kind: 'not-committed', why: `not found by a consistent ${policy.lookup} lookup after the ${policy.settleWindowMs} ms settle window` };
    return { kind: 'escalate', reason: `not found by ${policy.lookup} lookup after the settle window, the lookup may lag, and ${key.providerKey === null ? 'the tool has no key' : 'the key no longer protects a resend'}` };
  }
  if (keyProtects) return { kind: 'retry-same-key' };
  return { kind: 'escalate', reason: key.providerKey === null ? 'the tool has neither an idempotency key nor a lookup: only a human can tell whether it happened' : 'the provider key has expired and the tool has no lookup: a resend could act twice' };
}

/** The provider still dedupes a resend under the attempt's key at `now`. */
export function keyStillProtects(effect: EffectState, now: number, policy: Pick<ReconcilePolicy, 'dedupesByKey'>): boolean {
  const started = currentAttempt(effect)?.started;
  return !!started && policy.dedupesByKey && started.providerKey !== null && started.keyExpiresAt !== null && now < started.keyExpiresAt;
}

/**
 * When an agent resubmits an unknown effect, the shell reconciles first, right away: one lookup,
 * then a resend with the same key only if the key still protects it. Settle windows, proofs of
 * absence and escalation stay with the scheduled reconciler.
 */
export function decideInlineReconcile(effect: EffectState, now: number, policy: ReconcilePolicy, lookedUp: boolean): ReconcileStep {
  const status = effectStatus(effect, now);
  if (status === 'dispatching') return { kind: 'wait', until: currentAttempt(effect)!.started.leaseUntil, why: 'a live claim is in flight' };
  if (status !== 'unknown') return { kind: 'none' };
  if (policy.lookup !== 'none' && !lookedUp) return { kind: 'lookup' };
  if (keyStillProtects(effect, now, policy)) return { kind: 'retry-same-key' };
  return { kind: 'none' };
}

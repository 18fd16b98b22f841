import { doublingDelayMs } from './backoff.js';
import { currentAttempt, effectStatus, needsAudit, type AttemptRecord, type EffectState } from './effect-state.js';
import type { ReconciliationChecked } from './events.js';

/** What a tool's contract offers for finding out whether an effect happened. */
export interface ReconcilePolicy {
  /** How the provider can be asked: by key, by stamped reference, by name, or not at all. */
  lookup: 'key' | 'reference' | 'name' | 'none';
  /** "Not found" from the lookup, after the settle window, proves the effect did not happen. */
  lookupConsistent: boolean;
  /** The provider deduplicates a resend carrying the same key. */
  dedupesByKey: boolean;
  /** How long after a dispatch a provider may still commit or become searchable (counted from `settleFrom`). */
  settleWindowMs: number;
  /** Same-key resends allowed at most, and not later than `withinMs` after the first dispatch. */
  resends: { max: number; withinMs: number };
}

export type ReconcileStep =
  | { kind: 'none' }
  | { kind: 'wait'; until: number; why: string }
  | { kind: 'lookup' }
  | { kind: 'retry-same-key' }
  | { kind: 'not-committed'; why: string }
  | { kind: 'escalate'; reason: string }
  /** Settled through a resend: look its reference up once the lookup has settled, for a second object. */
  | { kind: 'audit' };

const FIRST_RECHECK_MS = 250;
const MAX_RECHECK_MS = 30_000;
/** Looks after the settle window that went unanswered before an effect whose key no longer protects goes to a human. */
export const MAX_UNANSWERED_LOOKS = 5;

/** When a check's lookup was sent (older checks kept only when their answer was recorded). */
export function askedAt(check: ReconciliationChecked): number {
  return check.askedAt ?? check.at;
}

/** Only a lookup the provider answered can show where an effect stands; a timeout, a refusal or a 5xx proves nothing. */
function answered(check: ReconciliationChecked): boolean {
  return check.verdict !== 'unanswered';
}

/**
 * The reconciler's next step for one open effect (docs/design.md, "Reconciliation"): look it up; not
 * found → re-check with backoff until the settle window passes; then resend with the same key
 * only while the provider still remembers it; otherwise prove absence or hand it to a human.
 */
export function decideReconcile(effect: EffectState, now: number, policy: ReconcilePolicy): ReconcileStep {
  const status = effectStatus(effect, now);
  const attempt = currentAttempt(effect);
  if (status === 'dispatching') return { kind: 'wait', until: attempt!.started.leaseUntil, why: 'a live claim is in flight' };
  if (status === 'terminal_failure') return attempt ? lookUpPoisoned(effect, attempt, now, policy) : { kind: 'none' };
  if (needsAudit(effect)) {
    const settledBy = settleFrom(attempt!) + policy.settleWindowMs;
    return now >= settledBy ? { kind: 'audit' } : { kind: 'wait', until: settledBy, why: 'settled through a resend: audited for a second object once the lookup has settled' };
  }
  if (status !== 'unknown' || !attempt) return { kind: 'none' };
  const resend = resendVerdict(effect, now, policy);
  if (policy.lookup !== 'none') {
    const next = nextLookup(effect, attempt, now, policy);
    if (next.kind === 'unanswered') {
      if (resend.allowed) return { kind: 'retry-same-key' };
      return { kind: 'escalate', reason: `the provider's ${policy.lookup} lookup did not answer the ${next.looks} looks after the settle window, so nothing proves whether it happened, and ${resend.why}` };
    }
    if (next.kind !== 'settled') return next;
    if (resend.allowed) return { kind: 'retry-same-key' };
    if (policy.lookupConsistent) return { kind: 'not-committed', why: `not found by a consistent ${policy.lookup} lookup after the ${policy.settleWindowMs} ms settle window` };
    return { kind: 'escalate', reason: `not found by ${policy.lookup} lookup after the settle window, the lookup may lag, and ${resend.why}` };
  }
  if (resend.allowed) return { kind: 'retry-same-key' };
  const noKey = effect.attempts[0]?.started.providerKey === null;
  return { kind: 'escalate', reason: noKey ? 'the tool has neither an idempotency key nor a lookup: only a human can tell whether it happened' : `the tool has no lookup and ${resend.why}: only a human can tell whether it happened` };
}

/**
 * Where an attempt's settle window starts: the last moment effectd may still have been sending it —
 * when it stopped waiting (the attempt's finish), or, for a claim whose instance died, its lease's
 * end. Counting from the dispatch instead would let a request that reached a slow provider late
 * commit after a consistent lookup had already "proved" it absent.
 */
export function settleFrom(attempt: AttemptRecord): number {
  return attempt.finished?.at ?? Math.max(attempt.started.at, attempt.started.leaseUntil);
}

/**
 * Lookups after one attempt: the first at once, re-checks doubling from 250 ms until the settle
 * window has passed, then one last look ASKED at or after its end; `settled` once the provider
 * answered such a look. Looks after the window that went unanswered are asked again with backoff;
 * `unanswered` after MAX_UNANSWERED_LOOKS of them.
 */
function nextLookup(effect: EffectState, attempt: AttemptRecord, now: number, policy: ReconcilePolicy): ReconcileStep | { kind: 'settled' } | { kind: 'unanswered'; looks: number } {
  const settledBy = settleFrom(attempt) + policy.settleWindowMs;
  const checks = effect.checks.filter((c) => askedAt(c) >= attempt.started.at);
  const last = checks[checks.length - 1];
  if (!last) return { kind: 'lookup' };
  const afterWindow = checks.filter((c) => askedAt(c) >= settledBy);
  if (afterWindow.some(answered)) return { kind: 'settled' };
  if (now < settledBy) {
    const next = Math.min(askedAt(last) + doublingDelayMs(checks.length - 1, FIRST_RECHECK_MS, MAX_RECHECK_MS), settledBy);
    return now >= next ? { kind: 'lookup' } : { kind: 'wait', until: next, why: 'not found yet; the provider may still commit or index it' };
  }
  if (afterWindow.length === 0) return { kind: 'lookup' };
  if (afterWindow.length >= MAX_UNANSWERED_LOOKS) return { kind: 'unanswered', looks: afterWindow.length };
  const next = askedAt(last) + doublingDelayMs(afterWindow.length - 1, FIRST_RECHECK_MS, MAX_RECHECK_MS);
  return now >= next ? { kind: 'lookup' } : { kind: 'wait', until: next, why: `the provider's lookup did not answer (${last.seen}); asking again` };
}

/**
 * A replayed stored failure poisons the key: nothing is sent again. But the provider may have
 * committed before it stored the failure, so looking up (a safe read) goes on through the settle
 * window; found → committed. After it, the effect stays with a human.
 */
function lookUpPoisoned(effect: EffectState, attempt: AttemptRecord, now: number, policy: ReconcilePolicy): ReconcileStep {
  if (policy.lookup === 'none') return { kind: 'none' };
  const next = nextLookup(effect, attempt, now, policy);
  return next.kind === 'settled' || next.kind === 'unanswered' ? { kind: 'none' } : next;
}

/** Whether a same-key resend may go now, and if not, why (the escalation's reason says it). */
export function resendVerdict(effect: EffectState, now: number, policy: Pick<ReconcilePolicy, 'dedupesByKey' | 'resends'>): { allowed: true } | { allowed: false; why: string } {
  const first = effect.attempts[0]?.started;
  const started = currentAttempt(effect)?.started;
  if (!first || !started || started.providerKey === null) return { allowed: false, why: 'the tool has no idempotency key' };
  if (!policy.dedupesByKey) return { allowed: false, why: 'the provider does not deduplicate by key' };
  if (started.keyExpiresAt === null || now >= started.keyExpiresAt) return { allowed: false, why: 'the provider key has expired, so a resend could act twice' };
  // A provider that refused a resend under the key will not honour it again: the key is spent.
  if (effect.attempts.some((a, i) => i > 0 && a.finished?.outcome === 'failed_before_effect' && a.finished.httpStatus !== undefined)) {
    return { allowed: false, why: 'the provider refused a resend under this key, so the key no longer protects one' };
  }
  const resends = effect.attempts.length - 1;
  if (resends >= policy.resends.max) {
    return { allowed: false, why: `it was re-sent ${resends} time(s) under the same key without a definitive answer (the contract's resends.max is ${policy.resends.max}); a provider that replays a stored failure without saying so answers like this` };
  }
  if (now - first.at >= policy.resends.withinMs) return { allowed: false, why: `the first dispatch was ${policy.resends.withinMs} ms or more ago (the contract's resends.withinMs)` };
  return { allowed: true };
}

/** A same-key resend may go now: the provider still dedupes the key and the contract allows another. */
export function keyStillProtects(effect: EffectState, now: number, policy: Pick<ReconcilePolicy, 'dedupesByKey' | 'resends'>): boolean {
  return resendVerdict(effect, now, policy).allowed;
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

/** What one inline settle has done so far (it starts afresh for every answer). */
export interface SettleProgress {
  lookedUp: boolean;
  resent: boolean;
  /** When the answer's budget is nearly spent: one last look then, if the schedule's next one comes later. */
  lastLookAt?: number;
}

/**
 * The next step of an inline settle: the reconciliation an answer waits for after a lost reply
 * (src/shell/inline-settle.ts). First what a resubmission does (one lookup, then one same-key
 * resend while the key protects and the provider dedupes), then the reconciler's own schedule:
 * re-checks with backoff, a proof of absence only once the settle window has passed. A live claim
 * is waited on, never taken over. `none` once settled or when only the background (or a human)
 * can go on; escalations stay with the background reconciler, so an unsettled answer is today's.
 */
export function decideSettleStep(effect: EffectState, now: number, policy: ReconcilePolicy, progress: SettleProgress): ReconcileStep {
  const status = effectStatus(effect, now);
  if (status !== 'unknown' && status !== 'dispatching' && status !== 'terminal_failure') return { kind: 'none' };
  if (!progress.resent) {
    const first = decideInlineReconcile(effect, now, policy, progress.lookedUp);
    if (first.kind !== 'none') return first;
  }
  const next = decideReconcile(effect, now, policy);
  if (next.kind === 'escalate' || next.kind === 'audit') return { kind: 'none' };
  // A lookup is a safe read: rather than answer with a check the schedule would take only after
  // the budget, take one last look as it ends (once: a check at or after lastLookAt is that look).
  const last = progress.lastLookAt;
  if (next.kind === 'wait' && last !== undefined && next.until > last && status !== 'dispatching' && policy.lookup !== 'none') {
    const latest = effect.checks[effect.checks.length - 1];
    if (!latest || askedAt(latest) < last) return now >= last ? { kind: 'lookup' } : { kind: 'wait', until: last, why: 'one last look before the answer budget ends' };
  }
  return next;
}

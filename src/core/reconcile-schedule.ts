import { doublingDelayMs } from './backoff.js';
import { currentAttempt, type AttemptRecord, type EffectState } from './effect-state.js';
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

/** Where an effect's lookups stand after its current attempt (see nextLookup). */
export type LookupSchedule =
  | { kind: 'lookup' }
  | { kind: 'wait'; until: number; why: string }
  /** The provider answered a look asked after the settle window: what it saw stands. */
  | { kind: 'settled' }
  /** Looks after the settle window went unanswered MAX_UNANSWERED_LOOKS times. */
  | { kind: 'unanswered'; looks: number };

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
export function nextLookup(effect: EffectState, attempt: AttemptRecord, now: number, policy: ReconcilePolicy): LookupSchedule {
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


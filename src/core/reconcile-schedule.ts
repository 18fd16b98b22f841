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
  /** How long after a proof of absence it is looked up once more (a late arrival is found then); absenceAuditAfterMs when absent. */
  absenceAuditMs?: number;
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

/** How long after a proof of absence it is looked up once more: the contract's, else 3× the settle window and at least the window + 10 s. */
export function absenceAuditAfterMs(policy: Pick<ReconcilePolicy, 'settleWindowMs' | 'absenceAuditMs'>): number {
  return policy.absenceAuditMs ?? Math.max(3 * policy.settleWindowMs, policy.settleWindowMs + 10_000);
}

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

/**
 * A 409 to a same-key request: the provider says a request under this key is still being processed
 * (Stripe's `idempotency_key_in_use`, the IETF idempotency draft's 409). Evidence that the first
 * request reached it, not an answer to a resend: it spends no resend budget.
 */
export function inFlightAnswer(attempt: AttemptRecord): boolean {
  return attempt.finished?.outcome === 'unknown' && attempt.finished.httpStatus === 409;
}

const HOLDER_FIRST_WAIT_MS = 500;
const HOLDER_MAX_WAIT_MS = 30_000;

/**
 * After "still in progress" answers, the next resend waits for the holder: doubling from 500 ms
 * per answer in a row, up to 30 s (the provider finishes the first request meanwhile).
 */
function holderWaitUntil(effect: EffectState): number | undefined {
  let inARow = 0;
  for (let i = effect.attempts.length - 1; i >= 0 && inFlightAnswer(effect.attempts[i]!); i--) inARow++;
  if (inARow === 0) return undefined;
  return currentAttempt(effect)!.finished!.at + doublingDelayMs(inARow - 1, HOLDER_FIRST_WAIT_MS, HOLDER_MAX_WAIT_MS);
}

export type ResendVerdict =
  | { allowed: true }
  /** `waitUntil`: not now, but later (the provider is still processing the first request): wait, do not escalate. */
  | { allowed: false; why: string; waitUntil?: number };

/** Whether a same-key resend may go now, and if not, why (the escalation's reason says it). */
export function resendVerdict(effect: EffectState, now: number, policy: Pick<ReconcilePolicy, 'dedupesByKey' | 'resends'>): ResendVerdict {
  const first = effect.attempts[0]?.started;
  const started = currentAttempt(effect)?.started;
  if (!first || !started || started.providerKey === null) return { allowed: false, why: 'the tool has no idempotency key' };
  if (!policy.dedupesByKey) return { allowed: false, why: 'the provider does not deduplicate by key' };
  if (started.keyExpiresAt === null || now >= started.keyExpiresAt) return { allowed: false, why: 'the provider key has expired, so a resend could act twice' };
  // A provider that refused a resend under the key will not honour it again: the key is spent.
  if (effect.attempts.some((a, i) => i > 0 && a.finished?.outcome === 'failed_before_effect' && a.finished.httpStatus !== undefined)) {
    return { allowed: false, why: 'the provider refused a resend under this key, so the key no longer protects one' };
  }
  // A "still in progress" answer is evidence, not a resend: it counts against no cap.
  const resends = effect.attempts.filter((a, i) => i > 0 && !inFlightAnswer(a)).length;
  if (resends >= policy.resends.max) {
    return { allowed: false, why: `it was re-sent ${resends} time(s) under the same key without a definitive answer (the contract's resends.max is ${policy.resends.max}); a provider that replays a stored failure without saying so answers like this` };
  }
  if (now - first.at >= policy.resends.withinMs) return { allowed: false, why: `the first dispatch was ${policy.resends.withinMs} ms or more ago (the contract's resends.withinMs)` };
  const holder = holderWaitUntil(effect);
  if (holder !== undefined && now < holder) return { allowed: false, why: 'the provider answered 409: a request under this key is still being processed', waitUntil: holder };
  return { allowed: true };
}

/** How long effectd keeps looking up an effect a human has (escalated) or whose key is poisoned, when no key retention bounds it. */
export const WATCH_HORIZON_MS = 7 * 24 * 3_600_000;
const WATCH_FIRST_MS = 1_000;
const WATCH_MAX_MS = 3_600_000;

/**
 * After effectd's own schedule has ended (escalated, or a poisoned key past its settle window), the
 * provider is still looked up, on a slowing schedule — doubling from the settle window (at least
 * 1 s) up to an hour — while the key is retained (or for WATCH_HORIZON_MS without a key): evidence
 * that appears later settles the effect without a human. `since`: when the schedule ended.
 */
export function watchLookup(effect: EffectState, since: number, now: number, policy: ReconcilePolicy): Extract<LookupSchedule, { kind: 'lookup' | 'wait' }> | { kind: 'none' } {
  if (policy.lookup === 'none') return { kind: 'none' };
  const keyExpiresAt = effect.attempts[0]?.started.keyExpiresAt ?? null;
  const horizon = keyExpiresAt ?? since + WATCH_HORIZON_MS;
  if (now >= horizon) return { kind: 'none' };
  const watched = effect.checks.filter((c) => askedAt(c) >= since);
  const last = watched.length > 0 ? askedAt(watched[watched.length - 1]!) : since;
  const next = last + doublingDelayMs(watched.length, Math.max(WATCH_FIRST_MS, policy.settleWindowMs), WATCH_MAX_MS);
  if (next >= horizon) return { kind: 'none' };
  return now >= next ? { kind: 'lookup' } : { kind: 'wait', until: next, why: 'still looked up on a slowing schedule: evidence that appears later settles it' };
}

/** A same-key resend may go now: the provider still dedupes the key and the contract allows another. */
export function keyStillProtects(effect: EffectState, now: number, policy: Pick<ReconcilePolicy, 'dedupesByKey' | 'resends'>): boolean {
  return resendVerdict(effect, now, policy).allowed;
}


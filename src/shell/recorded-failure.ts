import type { AgentOutcome } from '../core/agent-outcome.js';
import { currentAttempt, type EffectState } from '../core/effect-state.js';
import { asEffectdError, EffectdError, failureText, isEffectdError } from '../core/errors.js';

/**
 * Answers say only what is true (issue 27, rule 4). A failure of a part effectd depends on (the
 * ledger full, read-only or gone) or a defect is worded by asEffectdError as if nothing had been
 * written — "nothing was recorded; send the same command again". That holds only until the effect's
 * declaration or an attempt is in the ledger. From then on the failure says what the ledger holds
 * for the effect, with its reference: an attempt claimed (and perhaps sent) is never described as
 * not having happened.
 */

/** What a failed command had got as far as, when that is known without the ledger (it may be the part that failed). */
export interface FailedAt {
  /** The attempt that was claimed in the ledger and handed to the provider, whose outcome could not be recorded. */
  sent?: { attempt: number };
  /** What this command already knew was recorded (an answer it had before a later step failed). */
  known?: AgentOutcome;
}

/** The codes whose texts assume nothing was recorded (a failing dependency, a defect). */
export function saysNothingRecorded(error: unknown): boolean {
  if (!isEffectdError(error)) return true;
  return (error.code === 'unavailable' || error.code === 'internal') && error.details['recorded'] === undefined;
}

/**
 * The failure of a command about `effectId`, worded by what the ledger holds for it (`effect`, as
 * read after the failure; undefined when it holds nothing or could not be read) and what the
 * command got as far as (`at`). Refusals, conflicts and other coded answers pass unchanged.
 */
export function recordedFailure(error: unknown, effectId: string, effect: EffectState | undefined, answer: AgentOutcome | undefined, at: FailedAt = {}): unknown {
  if (!saysNothingRecorded(error)) return error;
  if (!effect && !at.sent && !at.known) return error;
  const base = asEffectdError(error);
  const cause = failureText(error);
  const attempt = effect ? currentAttempt(effect) : undefined;
  const attemptNo = at.sent?.attempt ?? attempt?.started.attempt;
  const what = at.sent
    ? `attempt ${at.sent.attempt} of effect ${effectId} was recorded as started and handed to the provider, but its outcome could not be recorded`
    : attempt
      ? `effect ${effectId} is recorded (state ${effect!.recordedStatus}, attempt ${attemptNo} recorded as started)`
      : effect
        ? `effect ${effectId} is recorded (state ${effect.recordedStatus}, no attempt started)`
        : `effect ${effectId} was recorded (state ${at.known!.state} when last read)`;
  const advice = attemptNo !== undefined || (at.known && at.known.state !== 'declared')
    ? `do not assume it failed and do not start it again under another step: ask with GET /v1/effects/${effectId} (reference ${effectId}); the same command sent again is answered from the ledger and never sent twice while its outcome is unknown`
    : `send the same command again: it is answered from the ledger (GET /v1/effects/${effectId} shows it)`;
  const told = answer ?? at.known;
  const recorded = told
    ? { status: told.status, state: told.state, ...(told.receipt ? { receipt: told.receipt } : {}), message: told.message }
    : { status: 'unknown' as const, state: effect?.recordedStatus ?? 'dispatching', message: `unknown: ${what}` };
  return new EffectdError(base.code, `${cause}; ${what}: ${advice}`, { ...base.details, effectId, reference: effectId, recorded }, { cause: error });
}
